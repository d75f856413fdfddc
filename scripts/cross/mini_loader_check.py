#!/usr/bin/env python3
"""Drives the minimal loader (mini_loader.py, written from docs/fixtures.md
alone) with pyarrow: loads every LP64 image of a corpus with it, imports each
root with pyarrow, validates it fully, compares it with the case's expected
values, and checks that every struct with a release was released exactly
once. The importing, validating and comparing are the pyarrow peer's own
(peer_pyarrow.py), so that only the loader differs from the reference run.

    build/venv-cross/bin/python scripts/cross/mini_loader_check.py CORPUS_DIR

Prints one JSON object per case, in the manifest's order:
  {"case", "outcome": "accepted" | "refused" | "unsupported" | "load-error",
   "equal", "message", "stream_error"?, "structs", "problems": [...]}
as peer_pyarrow.py's, but for "structs" (how many structs the loader gave a
release: each must be released once) and "problems" (those that were not, or
were released twice, or releases of structs that are not the loader's). A
case with an async device stream script (root kind 6), which the mini loader
does not play, is "unsupported" with the message "mini loader: ..."; its
script's structs are dropped by the loader (release_script); a case without
an LP64 image is "unsupported" ("mini loader: no LP64 image"). Then one line
{"summary": {...}}: the cases per outcome, the accepted and equal ones, and
the cases with release problems.
"""

import gc
import json
import os
import sys

import peer_pyarrow
from mini_loader import MiniLoader

ASYNC = 'mini loader: async device stream scripts (root kind 6) are not played (mini_loader.py)'
KEPT = []  # loaders whose structs pyarrow still holds: freeing their memory would pull it from under pyarrow


def run_case(name, image, expected):
    result = {'case': name, 'outcome': None, 'equal': None, 'message': None}
    try:
        fx = MiniLoader(image)
    except Exception as e:
        result.update(outcome='load-error', message='%s: %s' % (type(e).__name__, e), structs=0, problems=[])
        return result
    if any(r.kind == 6 for r in fx.roots):
        for r in fx.roots:
            if r.kind == 6:
                fx.release_script(r.ptr)  # never played: the producer drops what it holds
        result.update(outcome='unsupported', message=ASYNC)
    else:
        peer_pyarrow.judge(result, fx.roots, expected)
    gc.collect()
    result['structs'] = len(fx.records) - 1
    result['problems'] = fx.problems()
    if any(n == 0 for _, _, n, _ in fx.records[1:]):
        KEPT.append(fx)
    return result


def main(argv):
    if len(argv) != 2:
        sys.stderr.write(__doc__)
        return 2
    corpus = argv[1]
    summary = {'cases': 0, 'accepted_equal': 0, 'outcomes': {}, 'release_problems': []}
    for entry in peer_pyarrow.cases_of(corpus):
        # mini_corpus.py's manifest names no images: they are at lp64/<case>.acdfix.
        image = os.path.join(corpus, entry.get('images', {}).get('lp64', 'lp64/%s.acdfix' % entry['name']))
        if not os.path.exists(image):  # a corpus written for wasm32 only
            result = {'case': entry['name'], 'outcome': 'unsupported', 'equal': None, 'structs': 0, 'problems': [],
                      'message': 'mini loader: no LP64 image in the corpus'}
        else:
            try:
                expected = None if entry.get('invalid') else peer_pyarrow.expected_of(corpus, entry)
            except Exception as e:
                expected = (None, None, 'unreadable expected values (%s: %s)' % (type(e).__name__, e))
            result = run_case(entry['name'], image, expected)
        print(json.dumps(result, sort_keys=True), flush=True)
        summary['cases'] += 1
        summary['outcomes'][result['outcome']] = summary['outcomes'].get(result['outcome'], 0) + 1
        summary['accepted_equal'] += result['outcome'] == 'accepted' and result['equal'] is True
        if result['problems']:
            summary['release_problems'].append(result['case'])
    print(json.dumps({'summary': summary}, sort_keys=True))
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))
