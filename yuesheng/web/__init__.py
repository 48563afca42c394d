"""The browser views of a rite: ``sheet`` (Timeline → one self-contained HTML page). The only place HTML and JS live."""

from yuesheng.web.sheet import sheet_html, unplaced

__all__ = ["sheet_html", "unplaced"]
