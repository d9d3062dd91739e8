"""The Markdown the examination report writes, as one HTML page (no Markdown package is a
dependency, and the report needs a small subset):

    to_html("# Title\\n\\n| a | b |\\n|---|---:|\\n| x | 1 |\\n", "Title")

Blocks: `#` headings (one to six), pipe tables (a header row, then a `|---|---:|` row whose
`:` on the right aligns a column right, then rows), fenced code (```), lists of `- ` or `* `
items (an item indented under another nested in it), and paragraphs (lines up to a blank one).
Inline: `code`, **bold**, *italic*, images ![alt](src) and links [text](href). Everything else
is text, escaped; an image's src is kept as written (the report's PNGs, relative to the page).
"""

from __future__ import annotations

import html
import re

_HEADING = re.compile(r"^(#{1,6})\s+(.*)$")
_ITEM = re.compile(r"^(\s*)[-*]\s+(.*)$")
_SEPARATOR = re.compile(r"^\|?\s*:?-{3,}:?\s*(\|\s*:?-{3,}:?\s*)*\|?\s*$")
# Inline marks, tried in this order at each place: code first (its inside is literal).
_INLINE = re.compile(r"`([^`]+)`|!\[([^\]]*)\]\(([^)\s]+)\)|\[([^\]]+)\]\(([^)\s]+)\)"
                     r"|\*\*([^*]+)\*\*|\*([^*\s][^*]*)\*")


def inline(text: str) -> str:
    """A line's inline marks as HTML, the rest escaped."""
    out, end = [], 0
    for mark in _INLINE.finditer(text):
        out.append(html.escape(text[end:mark.start()]))
        code, alt, src, label, href, bold, italic = mark.groups()
        if code is not None:
            out.append(f"<code>{html.escape(code)}</code>")
        elif src is not None:
            out.append(f'<img alt="{html.escape(alt)}" src="{html.escape(src)}">')
        elif href is not None:
            out.append(f'<a href="{html.escape(href)}">{inline(label)}</a>')
        elif bold is not None:
            out.append(f"<strong>{inline(bold)}</strong>")
        else:
            out.append(f"<em>{inline(italic)}</em>")
        end = mark.end()
    return "".join(out) + html.escape(text[end:])


def _cells(line: str) -> list[str]:
    return [cell.strip() for cell in line.strip().strip("|").split("|")]


def _table(lines: list[str]) -> list[str]:
    """A pipe table's HTML: lines[0] the header, lines[1] the separator, the rest rows."""
    right = [cell.endswith(":") for cell in _cells(lines[1])]

    def row(line: str, tag: str) -> str:
        cells = _cells(line)
        return "<tr>" + "".join(
            f"<{tag}{' align=right' if i < len(right) and right[i] else ''}>{inline(cell)}"
            f"</{tag}>" for i, cell in enumerate(cells)) + "</tr>"

    return ["<table>", row(lines[0], "th"), *(row(line, "td") for line in lines[2:]),
            "</table>"]


def _list(lines: list[str]) -> str:
    """A list's HTML on one line; an item indented more than the one before is nested in it."""
    out, depths = [], []
    for line in lines:
        indent, text = _ITEM.match(line).groups()
        if not depths or len(indent) > depths[-1]:
            out.append("<ul>")
            depths.append(len(indent))
        else:
            out.append("</li>")
            while len(depths) > 1 and len(indent) < depths[-1]:
                out.append("</ul></li>")
                depths.pop()
        out.append(f"<li>{inline(text)}")
    return "".join(out) + "</li></ul>" * len(depths)


def _blocks(lines: list[str]) -> list[str]:
    out, i = [], 0
    while i < len(lines):
        line = lines[i]
        if not line.strip():
            i += 1
        elif line.startswith("```"):
            end = next((j for j in range(i + 1, len(lines)) if lines[j].startswith("```")),
                       len(lines))
            out.append("<pre><code>" + html.escape("\n".join(lines[i + 1:end]))
                       + "</code></pre>")
            i = end + 1
        elif heading := _HEADING.match(line):
            level = len(heading.group(1))
            out.append(f"<h{level}>{inline(heading.group(2))}</h{level}>")
            i += 1
        elif line.lstrip().startswith("|") and i + 1 < len(lines) and _SEPARATOR.match(
                lines[i + 1]):
            end = i + 2
            while end < len(lines) and lines[end].lstrip().startswith("|"):
                end += 1
            out += _table(lines[i:end])
            i = end
        elif _ITEM.match(line):
            end = i
            while end < len(lines) and _ITEM.match(lines[end]):
                end += 1
            out.append(_list(lines[i:end]))
            i = end
        else:
            end = i
            while end < len(lines) and lines[end].strip() and not (
                    lines[end].startswith(("```", "#", "|")) or _ITEM.match(lines[end])):
                end += 1
            end = max(end, i + 1)
            out.append("<p>" + " ".join(inline(text.strip()) for text in lines[i:end]) + "</p>")
            i = end
    return out


def to_html(markdown: str, title: str) -> str:
    """The page: `markdown` (the subset of the module docstring) under `title`."""
    body = "\n".join(_blocks(markdown.splitlines()))
    return ("<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\">"
            f"<title>{html.escape(title)}</title>\n<style>body{{font-family:sans-serif;"
            "max-width:60em;margin:auto}} table{{border-collapse:collapse}} td,th{{border:1px "
            "solid #ccc;padding:2px 6px}} pre{{background:#f6f6f6;padding:6px}}</style>"
            f"</head>\n<body>\n{body}\n</body></html>\n")
