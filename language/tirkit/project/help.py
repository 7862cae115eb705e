"""The help text of each diagnostic code, read from the tables of docs/diagnostics.md and
the pages it links (validation.md, constants.md): a row whose first cell names codes in
backticks gives them its last cell.  Where the documentation is not installed (a wheel), a
code has no help text beyond its name."""
from __future__ import annotations

import functools
import os
import re

PAGES = ("validation.md", "constants.md", "diagnostics.md")   # a rule's own page first
CODE = re.compile(r"`([a-z][a-z0-9-]*(?:/[a-z0-9-]+)?)`")


def docs_folder() -> str:
    here = os.path.dirname(os.path.abspath(__file__))
    return os.path.normpath(os.path.join(here, "..", "..", "..", "docs"))


def plain(markdown: str) -> str:
    """Markdown of a table cell as plain text."""
    t = re.sub(r"\[([^\]]+)\]\([^)]*\)", r"\1", markdown)
    t = re.sub(r"(\*\*|\*|`)", "", t)
    return re.sub(r"\s+", " ", t).strip()


@functools.lru_cache(maxsize=1)
def help_texts() -> dict:
    """{code: (page, markdown text)}; the first page that documents a code wins."""
    out: dict = {}
    folder = docs_folder()
    for page in PAGES:
        try:
            with open(os.path.join(folder, page), encoding="utf-8") as fh:
                lines = fh.read().split("\n")
        except OSError:
            continue
        for line in lines:
            if not line.startswith("|") or line.startswith("| ---"):
                continue
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            if len(cells) < 2:
                continue
            names = CODE.findall(cells[0])
            if not names or CODE.sub("", cells[0]).strip(" ,") not in ("", "(", ")"):
                continue
            for name in names:
                if "/" in name or name in ("syntax", "internal"):
                    out.setdefault(name, (page, cells[-1]))
    return out


def help_for(code: str):
    """(plain text, markdown, page) for `code`, or None when it is not documented."""
    entry = help_texts().get(code)
    if entry is None:
        return None
    page, md = entry
    return plain(md), md, page
