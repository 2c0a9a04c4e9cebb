#!/usr/bin/env bash
# Install the system packages the test suite needs, only when they are missing:
#   Debian's chromium (browser tests through Playwright) and its chromium-headless-shell (the
#   report's figure export: the same engine, faster to start; analysis/report/export.py), a
#   CJK font so Chinese items render in screenshots, pdflatex with booktabs, siunitx and the
#   Times fonts of mathptmx (texlive-science pulls texlive-fonts-recommended; the report's
#   LaTeX is compiled in a test), the CJK package and its Song font (Chinese names and
#   labels in that LaTeX), poppler-utils (pdftoppm renders those pages to PNG for a
#   reviewer, pdffonts and pdfinfo check the figures), Liberation Serif (the figures' Times:
#   a TrueType font, so the PDFs embed it as a real font), postgresql (the data layer's
#   second backend; the tests start a throwaway cluster of their own), and g++ and cmake
#   (llama-cpp-python compiles llama.cpp).
set -euo pipefail

need=()
[ -x /usr/bin/chromium ] || need+=(chromium)
[ -x /usr/lib/chromium/chromium-headless-shell ] || need+=(chromium-headless-shell)
if ! (command -v fc-list >/dev/null && fc-list :lang=zh | grep -q .); then
  need+=(fonts-wqy-zenhei)
fi
if ! ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 && ! command -v initdb >/dev/null; then
  need+=(postgresql)
fi
if ! command -v pdflatex >/dev/null || ! kpsewhich booktabs.sty >/dev/null 2>&1; then
  need+=(texlive-latex-base texlive-latex-recommended)  # the report's tables.tex is compiled
fi
# llama-cpp-python (the `local` extra) compiles llama.cpp: a C++ compiler and CMake.
command -v g++ >/dev/null || need+=(g++)
command -v cmake >/dev/null || need+=(cmake)
if ! kpsewhich siunitx.sty >/dev/null 2>&1 || ! kpsewhich ptmr8t.tfm >/dev/null 2>&1; then
  need+=(texlive-science)  # siunitx S columns; depends on texlive-fonts-recommended (Times)
fi
# Chinese names and labels in the report's LaTeX: CJKutf8 and its UTF-8 Song font (gbsn)
if ! kpsewhich CJKutf8.sty >/dev/null 2>&1 || ! kpsewhich c70gbsn.fd >/dev/null 2>&1; then
  need+=(latex-cjk-chinese latex-cjk-chinese-arphic-gbsn00lp)
fi
command -v pdftoppm >/dev/null && command -v pdffonts >/dev/null || need+=(poppler-utils)
if ! command -v fc-list >/dev/null || [ -z "$(fc-list 'Liberation Serif' family)" ]; then
  need+=(fonts-liberation)
fi
for extra in "$@"; do
  command -v "$extra" >/dev/null || need+=("$extra")
done
if [ ${#need[@]} -eq 0 ]; then
  exit 0
fi
echo "Installing system packages: ${need[*]}"
SUDO=""
if [ "$(id -u)" -ne 0 ]; then
  SUDO="sudo"
fi
export DEBIAN_FRONTEND=noninteractive
# Wait for another apt run to finish instead of failing on its lock.
APT_OPTS=(-o DPkg::Lock::Timeout=600)
$SUDO apt-get "${APT_OPTS[@]}" update -q
$SUDO apt-get "${APT_OPTS[@]}" install -y -q --no-install-recommends "${need[@]}"
