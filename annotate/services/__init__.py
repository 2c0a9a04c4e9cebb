"""Logic behind the pages; never imports streamlit, so it is testable on its own."""
