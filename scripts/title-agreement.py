#!/usr/bin/env python3
"""The steps of scripts/title-agreement that are easier in Python.

  title-agreement.py index MANIFEST OUT_HTML
      an index page linking every page of the manifest
  title-agreement.py trafilatura CORPUS MANIFEST OUT_TSV FACTS_TSV
      (in the venv) trafilatura's title of each page -> OUT_TSV
      (relative_path, title); FACTS_TSV: which step of trafilatura's
      extract_title chose it, and the page's <title>, <h1>s and og:title
  title-agreement.py batch MANIFEST OUT_CRAWLRC
      a trawl batch of `page URL --json`, one a page
  title-agreement.py trawl-titles RUN_OUTPUT MANIFEST OUT_TSV
      trawl's denoised title of each page, from that batch's output ->
      OUT_TSV (relative_path, ok|missing, denoised title, stored title,
      characters of stored text)
  title-agreement.py compare MANIFEST TRAFILATURA_TSV TRAWL_TSV FACTS_TSV OUT_TSV
      agreement per source and overall; disagreements -> OUT_TSV

MANIFEST is a TSV of relative_path, source, url (the URL nginx serves the
page at, which is also trafilatura's default_url).
"""
import html
import json
import re
import sys
from collections import Counter, defaultdict


def one_line(s):
    """Whitespace (tabs and newlines included) collapsed to single spaces."""
    return " ".join((s or "").split())


def read_tsv(path):
    with open(path, encoding="utf-8") as f:
        return [line.rstrip("\n").split("\t") for line in f if line.strip()]


def write_tsv(path, rows):
    with open(path, "w", encoding="utf-8") as f:
        for row in rows:
            f.write("\t".join(one_line(str(c)) for c in row) + "\n")


def cmd_index(manifest, out):
    rows = read_tsv(manifest)
    with open(out, "w", encoding="utf-8") as f:
        f.write('<!doctype html>\n<html><head><meta charset="utf-8">'
                "<title>title-agreement corpus</title></head><body>\n<ul>\n")
        for path, source, url in rows:
            f.write(f'<li><a href="{html.escape(url)}">{html.escape(source)}: '
                    f"{html.escape(path)}</a></li>\n")
        f.write("</ul>\n</body></html>\n")


# --- trafilatura -----------------------------------------------------------

def trafilatura_rule(tree):
    """Which step of trafilatura's title logic (the pinned version's
    extract_metadata / extract_title, replayed) gives the title, and that
    title before Document.clean_and_trim."""
    from trafilatura import metadata as md

    meta = md.examine_meta(tree)
    if meta.title:
        if md.extract_opengraph(tree).get("title"):
            return "og:title", meta.title
        return "meta name/itemprop title", meta.title
    meta = md.extract_meta_json(tree, meta)
    if meta.title:
        return "json-ld name/headline", meta.title
    h1s = tree.findall(".//h1")
    if len(h1s) == 1 and (t := md.block_text(h1s[0])):
        return "the only h1", t
    for i, expr in enumerate(md.TITLE_XPATHS, 1):
        t = md.extract_metainfo(tree, [expr])
        if t:
            return f"TITLE_XPATHS[{i}] (h/class title)", t
    title, first, second = md.examine_title_element(tree)
    for name, t in (("<title> part before separator", first),
                    ("<title> part after separator", second),
                    ("whole <title>", title)):
        if t and "." not in t:
            return name, t
    for h1 in h1s:
        if t := md.block_text(h1):
            return "first non-empty of several h1", t
    h2s = tree.xpath(".//h2")
    t = md.block_text(h2s[0]) if h2s else title
    return ("first h2" if h2s else "<title> with a dot, no h1/h2"), t


def cmd_trafilatura(corpus, manifest, out, facts_out):
    import trafilatura
    from trafilatura import metadata as md
    from trafilatura.utils import line_processing, load_html

    rows, facts = [], []
    for path, source, url in read_tsv(manifest):
        with open(f"{corpus}/{path}", "rb") as f:
            body = f.read()
        doc = trafilatura.extract_metadata(body, default_url=url)
        title = (doc.title if doc else None) or ""
        rows.append((path, title))
        tree = load_html(body)
        if tree is None:
            facts.append((path, "unparsed", "", "", "", ""))
            continue
        rule, replay = trafilatura_rule(tree)
        if (line_processing(html.unescape(replay or "")) or "") != title:
            rule += " (replay differs)"
        title_el = tree.find(".//head//title")
        h1s = [md.block_text(h) for h in tree.findall(".//h1")]
        og = md.extract_opengraph(tree).get("title") or ""
        facts.append((path, rule,
                      md.trim(title_el.text_content()) if title_el is not None else "",
                      len(h1s), " ⏐ ".join(h for h in h1s[:4]), og))
    write_tsv(out, rows)
    write_tsv(facts_out, facts)


# --- trawl -----------------------------------------------------------------

def cmd_batch(manifest, out):
    with open(out, "w", encoding="utf-8") as f:
        for _path, _source, url in read_tsv(manifest):
            f.write(f"page {url} --json\n")


def cmd_trawl_titles(run_output, manifest, out):
    """The run echoes each command as `> page URL --json` and prints its
    reply as pretty JSON on the lines after."""
    replies, url, block = {}, None, []

    def flush():
        if url is not None and block:
            try:
                replies[url] = json.loads("\n".join(block))
            except json.JSONDecodeError:
                pass

    with open(run_output, encoding="utf-8", errors="replace") as f:
        for line in f:
            m = re.match(r"^> page (\S+) --json$", line.rstrip("\n"))
            if m:
                flush()
                url, block = m.group(1), []
            elif line.startswith("> "):
                flush()
                url, block = None, []
            else:
                block.append(line)
    flush()
    rows, missing = [], 0
    for path, _source, url in read_tsv(manifest):
        r = replies.get(url)
        if r is None or not r.get("denoised"):
            missing += 1
            rows.append((path, "missing", "", (r or {}).get("title", ""), len((r or {}).get("text") or "")))
            continue
        rows.append((path, "ok", r["denoised"]["title"], r.get("title", ""), len(r.get("text") or "")))
    write_tsv(out, rows)
    if missing:
        print(f"title-agreement: {missing} page(s) have no denoised title in the db", file=sys.stderr)


# --- comparison ------------------------------------------------------------

PERMALINK_MARKS = re.compile(r"(?:\s*[¶#§🔗])+$")


def normalize(s):
    """Whitespace collapsed, trailing permalink marks (¶ # § 🔗) dropped,
    `( x )` read as `(x)`; case kept."""
    s = one_line(s)
    s = re.sub(r"\(\s+", "(", s)
    s = re.sub(r"\s+\)", ")", s)
    return PERMALINK_MARKS.sub("", s).strip()


def cmd_compare(manifest, traf_tsv, trawl_tsv, facts_tsv, out):
    traf = {r[0]: (r[1] if len(r) > 1 else "") for r in read_tsv(traf_tsv)}
    trawl = {r[0]: (r[2] if len(r) > 2 else "") for r in read_tsv(trawl_tsv) if r[1] == "ok"}
    text_chars = {r[0]: r[4] if len(r) > 4 else "" for r in read_tsv(trawl_tsv)}
    facts = {r[0]: r[1:] + [""] * (6 - len(r)) for r in read_tsv(facts_tsv)}
    pages, agree = Counter(), Counter()
    rules = defaultdict(Counter)  # source -> (rule, agreed) -> pages
    disagreements = []
    order = []
    for path, source, _url in read_tsv(manifest):
        if source not in pages:
            order.append(source)
        pages[source] += 1
        t, f = trawl.get(path), traf.get(path, "")
        rule = facts.get(path, ["?"])[0]
        same = t is not None and normalize(t) == normalize(f)
        agree[source] += same
        rules[source][rule, same] += 1
        if not same:
            fa = facts.get(path, [""] * 5)
            disagreements.append((path, source, "(no denoised title)" if t is None else t,
                                  f, rule, fa[1], fa[2], fa[3], fa[4], text_chars.get(path, "")))
    with open(out, "w", encoding="utf-8") as f:
        f.write("path\tsource\ttrawl_title\ttrafilatura_title\ttrafilatura_rule"
                "\ttitle_tag\th1_count\th1s\tog_title\ttrawl_text_chars\n")
        for row in disagreements:
            f.write("\t".join(one_line(str(c)) for c in row) + "\n")

    print(f"{'source':<20} {'pages':>6} {'agree':>6} {'%':>6}")
    for s in order:
        print(f"{s:<20} {pages[s]:>6} {agree[s]:>6} {100 * agree[s] / pages[s]:>6.1f}")
    n, a = sum(pages.values()), sum(agree.values())
    print(f"{'all':<20} {n:>6} {a:>6} {100 * a / max(n, 1):>6.1f}")
    print("\ntrafilatura's deciding step, pages agreeing / disagreeing:")
    for s in order:
        print(f"  {s}:")
        for rule in sorted({r for r, _ in rules[s]}, key=lambda r: -(rules[s][r, True] + rules[s][r, False])):
            print(f"    {rule:<40} {rules[s][rule, True]:>4} / {rules[s][rule, False]:<4}")
    print(f"\n{len(disagreements)} disagreements in {out}; the first 30 (trawl | trafilatura):")
    for row in disagreements[:30]:
        print(f"  {row[0]}\n    trawl:       {one_line(row[2])}\n    trafilatura: {one_line(row[3])}")


COMMANDS = {
    "index": (cmd_index, 2),
    "trafilatura": (cmd_trafilatura, 4),
    "batch": (cmd_batch, 2),
    "trawl-titles": (cmd_trawl_titles, 3),
    "compare": (cmd_compare, 5),
}

if __name__ == "__main__":
    if len(sys.argv) < 2 or sys.argv[1] not in COMMANDS or len(sys.argv) - 2 != COMMANDS[sys.argv[1]][1]:
        sys.exit(__doc__)
    COMMANDS[sys.argv[1]][0](*sys.argv[2:])
