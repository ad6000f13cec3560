"""Programs the tests need that PyPI does not ship: Tesseract (with Dutch and English) for OCR and
Debian's Chromium for the web page. On a developer's machine without them those tests are skipped
with one line saying what to run; CI installs them (`.ci/setup-tests`) and fails on any skip."""

from __future__ import annotations

from pathlib import Path

import pytest

from shared.pipeline.convert.ocr import installed_languages

SETUP = "install it with `bash .ci/setup-tests`"
CHROMIUM = "/usr/bin/chromium"

HAS_TESSERACT = {"nld", "eng"} <= installed_languages()
HAS_CHROMIUM = Path(CHROMIUM).exists()

requires_tesseract = pytest.mark.skipif(
    not HAS_TESSERACT, reason=f"Tesseract with nld and eng is missing: {SETUP}"
)
requires_chromium = pytest.mark.skipif(not HAS_CHROMIUM, reason=f"{CHROMIUM} is missing: {SETUP}")
