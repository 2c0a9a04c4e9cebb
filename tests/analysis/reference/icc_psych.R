# Reference values for h2htalk's ICC on incomplete designs (analysis/icc.py, analysis/reml.py).
#
# Run from the repository root (needs Debian's r-base-core, r-cran-psych, r-cran-lme4 and
# r-cran-jsonlite; the test suite itself does not need R):
#
#   Rscript tests/analysis/reference/icc_psych.R > tests/analysis/reference/icc_psych.json
#
# Every dataset is an items (rows) x raters (columns) matrix with NA for a missing rating.
# psych::ICC(x) with its defaults (lmer = TRUE) fits lme4::lmer(values ~ 1 + (1 | id) +
# (1 | items)) by REML, turns the variance components into mean squares and applies the
# Shrout & Fleiss formulas with F-based confidence bounds (alpha = .05).
suppressPackageStartupMessages({
  library(psych)
  library(lme4)
  library(jsonlite)
})

datasets <- list()

# 1. Typed by hand: 12 items x 4 raters on a 1-5 scale, 5 of 48 ratings missing (10%).
datasets$typed_10pct <- matrix(c(
  4, 5, 4, NA,
  2, 2, 3, 2,
  3, 4, 3, 3,
  5, 5, NA, 4,
  1, 2, 1, 1,
  3, 3, 4, 2,
  NA, 4, 4, 5,
  2, 3, 2, 2,
  4, 4, 5, NA,
  1, 1, 2, 2,
  3, NA, 3, 4,
  5, 4, 5, 5), ncol = 4, byrow = TRUE)

# 2. Generated: 40 items x 5 raters, item and rater effects, rounded to 1-5, 30% missing
#    (cells chosen at random; every item keeps at least one rating).
set.seed(20260101)
n <- 40; k <- 5
x <- outer(rnorm(n, 3, 1), rnorm(k, 0, 0.4), "+") + matrix(rnorm(n * k, 0, 0.7), n, k)
x <- pmin(pmax(round(x), 1), 5)
miss <- matrix(runif(n * k) < 0.30, n, k)
for (i in seq_len(n)) if (all(miss[i, ])) miss[i, sample(k, 1)] <- FALSE
x[miss] <- NA
datasets$random_30pct <- x

# 3. The demo study's design: 30 items, each rated by 3 of 6 raters, the raters in two
#    blocks that never share an item (50% of the cells missing).
set.seed(7)
n <- 30; k <- 6
x <- outer(rnorm(n, 3, 1), c(-0.3, 0, 0.4, 0.2, -0.2, 0.1), "+") +
  matrix(rnorm(n * k, 0, 0.6), n, k)
x <- pmin(pmax(round(x), 1), 5)
for (i in seq_len(n)) x[i, if (i %% 2 == 1) 4:6 else 1:3] <- NA
datasets$blocks_3of6 <- x

# 4. No rater effect at all (rater variance estimated at its boundary, zero), 25% missing.
set.seed(11)
n <- 25; k <- 4
x <- matrix(rep(rnorm(n, 0, 1), k), n, k) + matrix(rnorm(n * k, 0, 1), n, k)
x <- round(x * 2) / 2
x[matrix(runif(n * k) < 0.25, n, k)] <- NA
x[1, ] <- c(0.5, 1, 0, 1)  # keep the first item complete
datasets$no_rater_effect <- x

out <- list(
  generated_by = "tests/analysis/reference/icc_psych.R",
  R = paste(R.version$major, R.version$minor, sep = "."),
  psych = as.character(packageVersion("psych")),
  lme4 = as.character(packageVersion("lme4")),
  datasets = list())
for (name in names(datasets)) {
  x <- datasets[[name]]
  r <- suppressMessages(suppressWarnings(ICC(x)))
  res <- r$results
  out$datasets[[name]] <- list(
    matrix = x,
    n_obs = r$n.obs, n_judge = r$n.judge,
    variance = list(item = r$lme["ID", "variance"], rater = r$lme["Items", "variance"],
                    residual = r$lme["Residual", "variance"]),
    icc = setNames(lapply(seq_len(nrow(res)), function(i)
      list(value = res$ICC[i], low = res[i, "lower bound"], high = res[i, "upper bound"])),
      res$type))
}
cat(toJSON(out, auto_unbox = TRUE, digits = NA, na = "null", pretty = TRUE), "\n")
