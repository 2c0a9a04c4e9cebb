"""The Streamlit entry point (`h2h serve` runs it)."""

import streamlit as st

st.set_page_config(page_title="h2htalk", page_icon="💬", layout="wide")
page = st.navigation([st.Page("views/study.py", title="Study", icon="📋", default=True)])
page.run()
