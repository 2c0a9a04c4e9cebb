"""Streamlit pages: thin, each calls services and draws."""
