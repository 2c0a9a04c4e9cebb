# Reference values for analysis/rater_model.py from R's eRm (Mair & Hatzinger 2007), which
# fits the rating scale model by conditional maximum likelihood. With the replies as eRm's
# "persons" and the raters as its "items", that model is the many-facet Rasch model of
# analysis/rater_model.py: a rater's location is its severity, the thresholds are shared.
#
# Regenerate (Debian: apt-get install r-cran-erm):
#   Rscript tests/analysis/reference/mfrm_erm.R tests/analysis/reference
# Reads mfrm_sim.csv (item, rater, score 1..5), writes mfrm_erm_raters.csv,
# mfrm_erm_thresholds.csv and mfrm_erm_items.csv. Everything is centred so that raters'
# severities sum to zero, as in rater_model.py. R 4.2.2, eRm 1.0-2 produced the committed files.
suppressMessages(library(eRm))
dir <- commandArgs(trailingOnly = TRUE)[1]
d <- read.csv(file.path(dir, "mfrm_sim.csv"))
items <- sort(unique(d$item)); raters <- sort(unique(d$rater))
X <- matrix(NA, length(items), length(raters), dimnames = list(items, raters))
X[cbind(match(d$item, items), match(d$rater, raters))] <- d$score - 1
fit <- RSM(X, se = TRUE, sum0 = TRUE)
tt <- thresholds(fit)$threshtable[[1]]
loc <- tt[, "Location"]
shift <- mean(loc)
# se.eta: the SEs of the free rater parameters (all raters but the first), then the categories
se <- c(NA, fit$se.eta[seq_len(length(raters) - 1)])
write.csv(data.frame(rater = raters, severity = loc - shift, se = se),
          file.path(dir, "mfrm_erm_raters.csv"), row.names = FALSE)
write.csv(data.frame(k = seq_len(ncol(tt) - 1), tau = tt[1, -1] - loc[1]),
          file.path(dir, "mfrm_erm_thresholds.csv"), row.names = FALSE)
pp <- coef(person.parameter(fit), extrapolated = FALSE)
write.csv(data.frame(item = names(pp), measure = pp - shift),
          file.path(dir, "mfrm_erm_items.csv"), row.names = FALSE)
