"""Every st.session_state key the app uses, in one place."""

IDENTITY = "h2h_identity"          # annotate.services.auth.Identity of the signed-in person
SIGNIN_ERROR = "h2h_signin_error"  # the generic failure message to show once
RATE_POS = "h2h_rate_position"     # queue position the rating form shows
RATE_SHOWN_AT = "h2h_rate_shown_at"  # (assignment id, monotonic time) the item appeared
RATE_LOADED = "h2h_rate_loaded"    # assignment id whose values the form widgets hold
RATE_MESSAGE = "h2h_rate_message"  # a validation message from the last save attempt
NEW_CODE = "h2h_new_code"          # (name, code) shown once after creating a rater
ADMIN_FLASH = "h2h_admin_flash"    # one-shot success message on admin pages
