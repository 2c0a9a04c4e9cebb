"""Every st.session_state key the app uses, in one place."""

IDENTITY = "h2h_identity"          # annotate.services.auth.Identity of the signed-in person
SIGNIN_ERROR = "h2h_signin_error"  # the generic failure message to show once
SIGNIN_NOTICE = "h2h_signin_notice"  # why a session ended (signed out elsewhere, idle …)
COOKIE_CLEAR = "h2h_cookie_clear"  # the browser's session cookie is to be deleted
COOKIE_REJECTED = "h2h_cookie_rejected"  # a cookie token found dead (not looked up again)
RATE_DRAFT = "h2h_rate_draft"      # unsaved choices of an item whose save met an ended session
RATE_POS = "h2h_rate_position"     # queue position the rating form shows
RATE_SHOWN_AT = "h2h_rate_shown_at"  # (assignment id, monotonic time) the item appeared
RATE_LOADED = "h2h_rate_loaded"    # assignment id whose values the form widgets hold
RATE_MESSAGE = "h2h_rate_message"  # a validation message from the last save attempt
RATE_MISSING = "h2h_rate_missing"  # dimension keys a save attempt found without a score
NEW_CODE = "h2h_new_code"          # (name, code) shown once after creating a rater
ADMIN_FLASH = "h2h_admin_flash"    # one-shot success message on admin pages
RATE_COMMENT = "h2h_rate_comment"  # the rating form's comment widget
RATE_FLAG = "h2h_rate_flag"        # the rating form's red-flag widget
RATE_ITEM_NO = "h2h_item_no"       # the rating form's item-number box
REPORT_ZIP = "h2h_report_zip"      # the last report built on the Report page
REPORT_VERDICTS = "h2h_report_verdicts"
PROMPT_RUN = "h2h_new_run"         # (name, pid, items, template) of a prompt version running
TRAIN_FEEDBACK = "h2h_train_feedback"  # gold item whose feedback the training page shows
TRAIN_SHOWN_AT = "h2h_train_shown_at"  # (item id, monotonic time) a training item appeared
NORM_ITEM = "h2h_norm_item"        # (session id, item index) a norming participant is on
LANGUAGE = "h2h_language"          # this tab's language ("en", "zh")
LANGUAGE_CHOSEN = "h2h_language_chosen"  # chosen on the sign-in page: stored at sign-in
