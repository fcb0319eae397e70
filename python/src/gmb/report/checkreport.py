# SPDX-License-Identifier: BSD-3-Clause
"""Check a report in a real browser (headless Chromium): it renders, it opens with its Answers, its first figure
(paths by configuration) lies whole within the first screen of 1400 x 900, every image loads, the tables hold
numbers, no table cell is empty, and every row with a measured ceiling gives its % of ceiling.

    python -m gmb.checkreport REPORT.html [--screenshot out.png] [--first-screen first.png] [--json]

The report itself is never modified: a copy with a small inline script appended is opened in a temporary
directory with ``chromium --headless --dump-dom``; the script writes its findings (images: complete and
naturalWidth > 0; tables: numeric cells) into the DOM, which Chromium prints. A second run takes a screenshot,
which must not be blank (several distinct pixel values, a share of non-background pixels).
Exit status: 0 all checks pass, 1 a check failed, 2 no browser / bad input.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

# the first screen a person sees: the report's first figure must lie within it
FIRST_SCREEN = (1400, 900)
BROWSERS = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable", "chrome")

PROBE = r"""
<script>
window.addEventListener('load', function () {
  var out = {title: document.title, text_chars: (document.body.innerText || '').length, images: [], tables: []};
  var imgs = document.images;
  for (var i = 0; i < imgs.length; i++) {
    out.images.push({alt: imgs[i].alt, complete: imgs[i].complete, w: imgs[i].naturalWidth,
                     h: imgs[i].naturalHeight});
  }
  var num = /^[-+]?(\d+(\.\d*)?|\.\d+)([eE][-+]?\d+)?\s*%?$/;
  var tables = document.querySelectorAll('table');
  for (var t = 0; t < tables.length; t++) {
    var cells = tables[t].querySelectorAll('tbody td');
    var numeric = 0, numcells = 0, bad = [];
    for (var c = 0; c < cells.length; c++) {
      var s = cells[c].textContent.trim();
      var isNumCol = cells[c].classList.contains('num');
      if (isNumCol && s !== '') { numcells++; if (!num.test(s) || !isFinite(parseFloat(s))) bad.push(s); }
      if (num.test(s)) numeric++;
    }
    // a row whose ceiling was measured (a number under "ceiling GB/s") must say its "% of ceiling"
    var heads = Array.prototype.map.call(tables[t].querySelectorAll('thead th'),
                                         function (h) { return h.textContent.trim(); });
    var pct = heads.indexOf('% of ceiling'), ceil = heads.indexOf('ceiling GB/s'), unbounded = 0, empty = 0;
    var rows = tables[t].querySelectorAll('tbody tr');
    for (var r = 0; r < rows.length; r++) {
      var tds = rows[r].querySelectorAll('td');
      for (var d = 0; d < tds.length; d++) if (tds[d].textContent.trim() === '') empty++;
      if (pct >= 0 && ceil >= 0 && tds.length > Math.max(pct, ceil) && num.test(tds[ceil].textContent.trim()) &&
          !num.test(tds[pct].textContent.trim())) unbounded++;
    }
    out.tables.push({id: tables[t].id, rows: rows.length, cells: cells.length, headers: heads,
                     numeric: numeric, num_cells: numcells, bad_numbers: bad.slice(0, 5), empty_cells: empty,
                     ceiling_without_pct: unbounded});
  }
  var answers = document.getElementById('answers');
  var firstH2 = document.querySelector('h2');
  out.answers = {present: !!answers, first: !!answers && firstH2 !== null && answers.contains(firstH2),
                 text_chars: answers ? (answers.innerText || '').length : 0};
  // the first figure (paths by configuration) must be whole on the first screen, under the title
  var overview = document.getElementById('overview');
  var box = overview ? overview.getBoundingClientRect() : null;
  var answered = document.getElementById('answers-table');
  out.first_screen = {paths: answered ? parseInt(answered.getAttribute('data-paths') || '0', 10) : 0,
                      overview: !!overview, top: box ? box.top + window.scrollY : null,
                      bottom: box ? box.bottom + window.scrollY : null, width: box ? box.width : null,
                      viewport: [window.innerWidth, window.innerHeight]};
  var pre = document.createElement('pre');
  pre.id = 'gmb-check-result';
  pre.textContent = JSON.stringify(out);
  document.body.appendChild(pre);
});
</script>
"""


class CheckError(RuntimeError):
    pass


def find_browser() -> str | None:
    env = os.environ.get("GMB_CHROMIUM")
    if env:
        return env
    return next((shutil.which(b) for b in BROWSERS if shutil.which(b)), None)


def _chromium(browser: str, args: list[str], profile: Path, timeout: float) -> subprocess.CompletedProcess:
    argv = [browser, "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run",
            "--no-default-browser-check", "--disable-extensions", "--allow-file-access-from-files",
            f"--user-data-dir={profile}", *args]
    try:
        return subprocess.run(argv, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        raise CheckError(f"{browser} did not finish in {timeout:.0f} s") from None


def dom_probe(report: Path, browser: str, timeout: float = 120) -> dict:
    with tempfile.TemporaryDirectory(prefix="gmb-check-") as tmp:
        tmp = Path(tmp)
        html = report.read_text(encoding="utf-8", errors="replace")
        i = html.lower().rfind("</body>")
        html = html[:i] + PROBE + html[i:] if i >= 0 else html + PROBE
        copy = tmp / "report.html"
        copy.write_text(html, encoding="utf-8")
        p = _chromium(browser, ["--virtual-time-budget=15000", "--window-size={},{}".format(*FIRST_SCREEN),
                                "--dump-dom", copy.as_uri()], tmp / "profile", timeout)
    m = re.search(r'<pre id="gmb-check-result">(.*?)</pre>', p.stdout, re.S)
    if not m:
        raise CheckError(f"the browser printed no check result (exit {p.returncode}): "
                         f"{(p.stderr or p.stdout).strip()[-500:]}")
    import html as htmlmod

    return json.loads(htmlmod.unescape(m.group(1)))


def screenshot(report: Path, browser: str, out: Path, width: int = 1280, height: int = 2400,
               timeout: float = 120) -> Path:
    with tempfile.TemporaryDirectory(prefix="gmb-shot-") as tmp:
        p = _chromium(browser, [f"--window-size={width},{height}", "--hide-scrollbars",
                                f"--screenshot={out.resolve()}", report.resolve().as_uri()], Path(tmp) / "profile",
                      timeout)
    if not out.is_file() or out.stat().st_size == 0:
        raise CheckError(f"no screenshot written (exit {p.returncode}): {(p.stderr or '').strip()[-500:]}")
    return out


def blank_stats(path: Path) -> dict:
    """Share of pixels that differ from the most common colour, and the number of distinct colours."""
    import numpy as np
    from matplotlib import image

    px = image.imread(str(path))
    if px.dtype != np.uint8:
        px = (px * 255).round().astype(np.uint8)
    if px.ndim == 2:
        px = px[:, :, None]
    h, w = px.shape[:2]
    flat = px[:, :, :3].reshape(-1, px.shape[2] if px.shape[2] < 3 else 3)
    colours, counts = np.unique(flat, axis=0, return_counts=True)
    return {"width": int(w), "height": int(h), "distinct_colours": int(len(colours)),
            "non_background_share": float(1 - counts.max() / counts.sum())}


def first_screen_problems(first: dict) -> list[str]:
    """Where the Answers have paths, the first figure (id 'overview') must be whole within the first screen."""
    if not first.get("paths"):
        return []
    if not first.get("overview"):
        return [f"the Answers have {first['paths']} path(s) but no first figure (id 'overview')"]
    height = FIRST_SCREEN[1]
    if first["bottom"] > height:
        return [f"the first figure ends at {first['bottom']:.0f} px, below the first screen ({height} px high at "
                f"{first['viewport'][0]} px wide)"]
    return []


def check(report: Path, browser: str | None = None, shot: Path | None = None,
          first_screen: Path | None = None) -> dict:
    """Run all checks; returns {'ok': bool, 'problems': [...], 'dom': {...}, 'screenshot': {...}}."""
    report = Path(report)
    if not report.is_file():
        raise FileNotFoundError(f"{report}: no such report")
    browser = browser or find_browser()
    if not browser:
        raise CheckError("no Chromium found (Debian: apt-get install chromium; or set GMB_CHROMIUM)")
    dom = dom_probe(report, browser)
    problems = []
    if not dom.get("title"):
        problems.append("the page has no title")
    if dom.get("text_chars", 0) < 100:
        problems.append(f"the page shows almost no text ({dom.get('text_chars')} characters)")
    imgs = dom.get("images", [])
    if not imgs:
        problems.append("the report has no images")
    for im in imgs:
        if not (im["complete"] and im["w"] > 0 and im["h"] > 0):
            problems.append(f"image {im['alt']!r} did not load (naturalWidth {im['w']})")
    tables = dom.get("tables", [])
    if not tables:
        problems.append("the report has no tables")
    for t in tables:
        if t["bad_numbers"]:
            problems.append(f"table {t['id']!r}: numeric cells that are not numbers: {t['bad_numbers']}")
        if t.get("empty_cells"):
            problems.append(f"table {t['id']!r}: {t['empty_cells']} empty cell(s) (a cell says why it has no value)")
        if t.get("ceiling_without_pct"):
            problems.append(f"table {t['id']!r}: {t['ceiling_without_pct']} row(s) with a measured ceiling and no "
                            f"% of ceiling")
    answers = dom.get("answers", {})
    if not answers.get("present"):
        problems.append("the report has no Answers section (id 'answers')")
    elif not answers.get("first"):
        problems.append("the Answers section is not the report's first section")
    elif answers.get("text_chars", 0) < 40:
        problems.append(f"the Answers section is almost empty ({answers.get('text_chars')} characters)")
    problems += first_screen_problems(dom.get("first_screen") or {})
    # tables of reasons (skipped or failed points) hold only text; the result tables must hold numbers
    data_tables = [t for t in tables if t["id"] != "libraries" and t["num_cells"] > 0]
    if not data_tables:
        problems.append("no result table holds numbers")
    shot_stats = None
    with tempfile.TemporaryDirectory(prefix="gmb-shot-out-") as tmp:
        target = shot or Path(tmp) / "report.png"
        screenshot(report, browser, target)
        shot_stats = blank_stats(target)
    if shot_stats["distinct_colours"] < 8 or shot_stats["non_background_share"] < 0.01:
        problems.append(f"the screenshot looks blank ({shot_stats})")
    if first_screen:
        screenshot(report, browser, first_screen, *FIRST_SCREEN)
    return {"ok": not problems, "problems": problems, "report": str(report), "browser": browser, "dom": dom,
            "screenshot": {**shot_stats, "path": str(shot) if shot else None}}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m gmb.checkreport", description=__doc__.splitlines()[0])
    ap.add_argument("report")
    ap.add_argument("--screenshot", metavar="PNG", help="keep the screenshot here (never overwritten)")
    ap.add_argument("--first-screen", metavar="PNG", help="keep a screenshot of the first screen (1400 x 900) here")
    ap.add_argument("--browser", help="Chromium executable (default: chromium on PATH, or $GMB_CHROMIUM)")
    ap.add_argument("--json", action="store_true", help="print the full findings as JSON")
    args = ap.parse_args(argv)
    shot = Path(args.screenshot) if args.screenshot else None
    first = Path(args.first_screen) if args.first_screen else None
    for kept in (shot, first):
        if kept and kept.exists():
            print(f"check-report: {kept} exists; not overwriting", file=sys.stderr)
            return 2
    try:
        res = check(Path(args.report), args.browser, shot, first)
    except (CheckError, FileNotFoundError) as exc:
        print(f"check-report: {exc}", file=sys.stderr)
        return 2
    if args.json:
        print(json.dumps(res, indent=1))
    else:
        d = res["dom"]
        print(f"{res['report']}: title {d['title']!r}; {len(d['images'])} images, "
              f"{sum(i['w'] > 0 for i in d['images'])} loaded; {len(d['tables'])} tables, "
              + ", ".join(f"{t['id'] or '?'}: {t['rows']} rows/{t['num_cells']} numbers" for t in d["tables"])
              + f"; screenshot {res['screenshot']['width']}x{res['screenshot']['height']}, "
              f"{res['screenshot']['distinct_colours']} colours, "
              f"{100 * res['screenshot']['non_background_share']:.1f} % non-background")
        for p in res["problems"]:
            print(f"FAIL: {p}")
        print("OK" if res["ok"] else "FAILED")
    return 0 if res["ok"] else 1


if __name__ == "__main__":
    sys.exit(main())
