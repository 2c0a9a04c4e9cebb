"""The rating app for raters and admins (Streamlit) and the ``h2h`` command."""

__all__: list[str] = []
