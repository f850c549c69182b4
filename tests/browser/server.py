"""Serve the built site (site/) over HTTP on 127.0.0.1, the way a static host would.

Used by the browser tests (tests/browser/conftest.py) and handy on its own:

    python -m tests.browser.server            # serves site/ on a free port, prints the address
    python -m tests.browser.server site 8000

Like GitHub Pages: ``/dir/`` serves ``dir/index.html``, a missing path answers 404 with
``404.html``, text files are sent gzip-compressed when the browser accepts it (so page
weights and Lighthouse timings match a real deployment), and every request is answered by
its own thread (a browser opens several connections at once). Absolute addresses made from
the ``site_url`` the site was built for are rewritten to the address it is served at.
"""

from __future__ import annotations

import gzip
import http.server
import mimetypes
import re
import sys
import threading
from functools import lru_cache, partial
from pathlib import Path

from tools.layout import ROOT

_TYPES = {
    ".html": "text/html; charset=utf-8",
    ".css": "text/css; charset=utf-8",
    ".js": "text/javascript; charset=utf-8",
    ".json": "application/json",
    ".xml": "application/xml",
    ".svg": "image/svg+xml",
    ".woff2": "font/woff2",
    ".woff": "font/woff",
    ".ttf": "font/ttf",
    ".ipynb": "application/x-ipynb+json",
    ".inv": "application/octet-stream",
    ".gz": "application/gzip",
    ".png": "image/png",
    ".ico": "image/x-icon",
}
_COMPRESS = {".html", ".css", ".js", ".json", ".xml", ".svg", ".ipynb", ".txt", ".map"}


def site_url_of(directory: Path) -> str | None:
    """The ``site_url`` the site was built for: the shortest <loc> of its sitemap."""
    sitemap = Path(directory) / "sitemap.xml"
    if not sitemap.is_file():
        return None
    locs = re.findall(r"<loc>([^<]+)</loc>", sitemap.read_text(encoding="utf-8"))
    return min(locs, key=len) if locs else None


@lru_cache(maxsize=512)
def _content(path: str, mtime_ns: int, compress: bool, rebase: tuple[str, str] | None) -> bytes:
    data = Path(path).read_bytes()
    if rebase and path.endswith((".html", ".xml")):
        data = data.replace(rebase[0].encode(), rebase[1].encode())
    return gzip.compress(data, compresslevel=6, mtime=0) if compress else data


class _Handler(http.server.SimpleHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive, as real hosts do

    def log_message(self, format, *args):  # noqa: A002  (quiet: the tests report failures)
        pass

    def _resolve(self) -> tuple[Path | None, int]:
        path = Path(self.translate_path(self.path))
        if path.is_dir():
            if not self.path.split("?", 1)[0].endswith("/"):
                return path, 301
            path = path / "index.html"
        if path.is_file():
            return path, 200
        return Path(self.directory) / "404.html", 404

    def do_HEAD(self):
        self._send(body=False)

    def do_GET(self):
        self._send(body=True)

    def _send(self, body: bool) -> None:
        path, status = self._resolve()
        if status == 301:
            location = self.path.split("?", 1)[0] + "/"
            self.send_response(301)
            self.send_header("Location", location)
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        if not path.is_file():
            self.send_error(404)
            return
        suffix = path.suffix.lower()
        ctype = (
            _TYPES.get(suffix) or mimetypes.guess_type(path.name)[0] or "application/octet-stream"
        )
        accepts_gzip = "gzip" in self.headers.get("Accept-Encoding", "")
        data = _content(
            str(path),
            path.stat().st_mtime_ns,
            suffix in _COMPRESS and accepts_gzip,
            self.server.rebase,
        )
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(data)))
        if suffix in _COMPRESS:
            self.send_header("Vary", "Accept-Encoding")
            if accepts_gzip:
                self.send_header("Content-Encoding", "gzip")
        # GitHub Pages sends max-age=600 for everything
        self.send_header("Cache-Control", "max-age=600")
        self.end_headers()
        if body:
            self.wfile.write(data)


class SiteServer:
    """A threaded static server for ``directory`` on 127.0.0.1; ``port=0`` picks a free one."""

    def __init__(self, directory: Path | str, port: int = 0) -> None:
        handler = partial(_Handler, directory=str(directory))
        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", port), handler)
        self.httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/"
        # Serve the site as if it had been built for this address: absolute URLs with the
        # built-in site_url (sitemaps, canonical links) point here instead. Material only
        # navigates instantly to pages whose sitemap address matches, port included.
        built_for = site_url_of(Path(directory))
        self.httpd.rebase = (built_for, self.url) if built_for and built_for != self.url else None
        self._thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def __enter__(self) -> SiteServer:
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


def main(argv: list[str]) -> int:
    directory = Path(argv[0]) if argv else ROOT / "site"
    port = int(argv[1]) if len(argv) > 1 else 0
    if not (directory / "index.html").is_file():
        print(f"error: {directory}/index.html not found; run `make build` first")
        return 1
    with SiteServer(directory, port) as server:
        print(f"serving {directory} at {server.url} (Ctrl-C stops)")
        try:
            threading.Event().wait()
        except KeyboardInterrupt:
            pass
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
