"""Every st.session_state key the app uses, in one place."""

ENGINE_URL = "h2h_engine_url"
