"""Grammar-aware fuzzer for every registered wire format, checking the parser contract from outside.

Why a fuzzer next to the hypothesis properties (tests/test_properties.py): hypothesis explores small
structured documents well but slowly; this throws thousands of inputs at the public API, most of them
broken on purpose (truncated, flipped, nested thousands deep, full of markers), and checks every input
against the invariants of docs/design.md that are visible from outside:

1. `feed` / `close` never raise and return lists of the four event types (`raises`); an exception
   the parser's own safety net caught and logged is reported too (`internal_error`);
2. chunking invariance: the merged events are equal for the whole text, a random split and
   (short inputs) one character per chunk; `parse()` equals the whole text fed once (`chunking`);
3. events are well formed (`well_formed`);
4. arguments: the fragments of each ended call concatenate to JSON that decodes to its arguments,
   a dict, with no lone surrogate (`arguments`);
5. the finished result's call indexes are 0..n-1 (`indexes`);
6. nothing lost: without any CallStart the content is the text, stripped; content is always a
   subsequence of the input (`nothing_lost`);
7. a generated valid document (before mutation) gives exactly its content and calls (`expected`);
8. a per-input time limit (`hang`, confirmed in CPU time); a cost per character far above the
   median, or an input that, repeated k times, costs far more than k times as much, is reported
   but does not fail (`slow`);
9. at most `--max-log-lines` log records per response (`log_bound`, switch off with --no-log-check).

Formats come from the registry `FORMATS`, and what the fuzzer knows of each from its spec: markers,
openers and the writer (`fmt.write`), which writes a share of every format's blocks and all of a
format's blocks when it has no grammar-aware generator (`--written-only` fuzzes every format that
way), so a new format is fuzzed with no edit here. Only the public API is used: `parse`,
`get_format(name).stream(tools, id_factory)` with `feed` / `close`, the events and `build_result`.
A violation is shrunk (delta debugging over characters, then
chunks, then tools), saved as JSON under --out, and printed; the run goes on (up to a cap per
invariant) and exits non-zero at the end.

    python scripts/fuzz.py --format all --seconds 60
    python scripts/fuzz.py --format hermes_json --inputs 20000 --seed 7 --no-log-check
    python scripts/fuzz.py --replay fuzz-out/hermes_json-chunking-0123456789.json   # still failing?
    python scripts/fuzz.py --shrink fuzz-out/*.json --shrink-seconds 60             # smaller, in place

Input `i` of a run is made from (format, --seed, i) alone, so `--start i --inputs 1` makes it again.
Speed: about three quarters of the time is the parsers' own `feed`; the one-character chunking of
every input under --char-limit dominates (--char-every N runs it on every N-th one). The summary
gives inputs per wall second and per CPU second (on a shared machine the second is the one to read).

The library, by concern (scripts/fuzzing/):

- `values`: random words, strings, names, JSON values, Python literals; every format's markers;
- `blocks`: the optional grammar-aware block generators, per format;
- `generate`: a format's `Profile` (from its spec), written blocks, prose, documents with their
  expected content and calls, noise;
- `mutate`: the mutations and the mix of inputs made from (format, seed, index);
- `invariants`: the `Checker` of one input against the invariants above;
- `shrink`: delta debugging of a violation;
- `run`: the driver, the summary, replay and re-shrinking, the command line.
"""
