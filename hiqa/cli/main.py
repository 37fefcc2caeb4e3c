"""The ``hiqa`` command line: every capability of the app, on the same engine."""
from __future__ import annotations

import argparse
import logging
import os
import sys
from collections.abc import Callable, Sequence
from dataclasses import asdict
from pathlib import Path

from hiqa.augment import TABLE_TEXTS, Strategy
from hiqa.cli import jsonout

Handler = Callable[[argparse.Namespace], int]


def _cmd_structure(args: argparse.Namespace) -> int:
    from hiqa.formats import load_document
    from hiqa.formats.fidelity import fidelity

    doc = load_document(args.file)
    for w in doc.warnings:
        print(f"warning: {w}", file=sys.stderr)
    nodes = doc.nodes if args.terms else doc.headings
    heads: list[dict[str, object]] = []
    for h in nodes:
        row: dict[str, object] = {"level": h.level, "title": h.title, "page": h.page}
        if args.terms:
            row["kind"] = h.kind
        heads.append(row)
    report = fidelity(doc) if args.report else None
    if args.json:
        out: object = heads if report is None else {"report": report.as_dict(), "headings": heads}
        jsonout.dump(out, sys.stdout, indent=1 if args.pretty else None)
        print()
        return 0
    print(f"{doc.title}  ({doc.format}, {doc.page_count} page(s), {len(heads)} headings)")
    for head in heads:
        mark = "· " if head.get("kind") == "term" else ""
        print(f"{'  ' * int(str(head['level']))}{mark}{head['title']}  [p. {head['page']}]")
    if report is not None:
        print("\nFidelity")
        print(f"  headings:  {report.summary}")
        print(f"  numbered:  {report.numbered} of {report.headings}")
        print(f"  confidence: {report.confidence:.2f} (below 0.6, --llm-format auto repairs it)")
        if report.toc_pages:
            print(f"  table of contents: pages {report.toc_pages} ({report.toc_entries} entries, "
                  f"{report.toc_found} found in the text), no segments made of them")
        if report.index_pages:
            print(f"  index:     pages {report.index_pages}, no segments made of them")
        for w in report.warnings:
            print(f"  warning:   {w}")
        if not report.warnings:
            print("  warnings:  none")
    return 0


def _cmd_segments(args: argparse.Namespace) -> int:
    from hiqa.augment import segment_document
    from hiqa.formats import load_document

    doc = load_document(args.file)
    for w in doc.warnings:
        print(f"warning: {w}", file=sys.stderr)
    segments = segment_document(doc, args.strategy, table_text=args.table_text)
    if args.json:
        rows = []
        for s in segments:
            row = asdict(s)
            row["content_hash"] = s.content_hash
            rows.append(row)
        jsonout.dump(rows, sys.stdout, indent=1 if args.pretty else None)
        print()
    else:
        from hiqa.augment import render_path
        from hiqa.model import segment_pages_label

        for s in segments:
            kind = " [table]" if s.is_table else " [figure]" if s.is_image else ""
            pages = segment_pages_label(s)  # as the app labels it
            print(f"{s.order}.{s.piece}  {render_path(s.path)}{kind}  "
                  f"({pages + ', ' if pages else ''}{len(s.text)} chars)")
    return 0


DATA_DIR_HELP = "data directory (default: $HIQA_DATA_DIR or ./data)"


class _VersionAction(argparse.Action):
    """``--version``: computed only when asked, so other commands import nothing for it."""

    def __init__(self, option_strings: Sequence[str], dest: str = argparse.SUPPRESS,
                 default: str = argparse.SUPPRESS, help: str | None = None):
        super().__init__(option_strings, dest=dest, default=default, nargs=0, help=help)

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace,
                 values: object, option_string: str | None = None) -> None:
        from hiqa.version import version_line

        print(version_line())
        parser.exit()


def environment_epilog() -> str:
    """The ``HIQA_*`` variables the CLI reads, from ``hiqa.settings.ENVIRONMENT``."""
    from hiqa.settings import ENVIRONMENT

    width = max(len(name) for name, _ in ENVIRONMENT)
    rows = "\n".join(f"  {name:{width}}  {meaning}" for name, meaning in ENVIRONMENT)
    return (f"environment variables (--data-dir overrides HIQA_DATA_DIR):\n{rows}\n\n"
            "Every command has --help; --data-dir goes before or after the command.")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="hiqa",
        description="HiQA: question answering over collections of near-identical documents.",
        epilog=environment_epilog(),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action=_VersionAction,
                        help="print the package version and the default embedder's model id")
    parser.add_argument("--data-dir", metavar="DIR", help=DATA_DIR_HELP)
    parser.add_argument("--debug", action="store_true",
                        help="on an error, print the traceback too (accepted anywhere)")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True

    p = sub.add_parser("structure", help="print the detected heading structure of a file")
    p.add_argument("file", help="PDF, Markdown, text or HTML file")
    p.add_argument("--json", action="store_true", help='JSON list of {"level","title","page"}')
    p.add_argument("--pretty", action="store_true", help="indent the JSON")
    p.add_argument("--terms", action="store_true",
                   help='include definition terms (options, error codes …), marked "kind": "term"')
    p.add_argument("--report", action="store_true",
                   help="add the fidelity report: evidence used, headings per level, table of "
                        'contents and index pages set aside, warnings (JSON: {"report", "headings"})')
    p.set_defaults(func=_cmd_structure)

    p = sub.add_parser("segments", help="print the segments HCA makes of a file")
    p.add_argument("file")
    p.add_argument("--strategy", default="hca", choices=[s.value for s in Strategy])
    p.add_argument("--table-text", default="summary", choices=list(TABLE_TEXTS),
                   help="what of a table is embedded: caption+header+first column, or all")
    p.add_argument("--json", action="store_true")
    p.add_argument("--pretty", action="store_true")
    p.set_defaults(func=_cmd_segments)

    for register in _extra_commands():
        register(sub)
    for command in sub.choices.values():
        # SUPPRESS: when not given after the command, the value given before it (or None) stays
        command.add_argument("--data-dir", metavar="DIR", default=argparse.SUPPRESS,
                             help=DATA_DIR_HELP)
    return parser


def _extra_commands() -> list[Callable[[argparse._SubParsersAction], None]]:
    from hiqa.cli import demo as cli_demo
    from hiqa.cli import eval as cli_eval
    from hiqa.cli import index as cli_index

    return [cli_index.register, cli_eval.register, cli_demo.register]


class _Notices(logging.Handler):
    """The engine's notices (``logging`` under ``hiqa``: waiting for a store another process
    holds) as lines on the stderr of the moment."""

    def emit(self, record: logging.LogRecord) -> None:
        print(f"note: {record.getMessage()}", file=sys.stderr, flush=True)


def main(argv: Sequence[str] | None = None) -> int:
    from hiqa.cli.errors import report, split_debug

    engine = logging.getLogger("hiqa")
    if not any(isinstance(h, _Notices) for h in engine.handlers):
        engine.addHandler(_Notices(logging.INFO))
    args_list, debug = split_debug(list(sys.argv[1:] if argv is None else argv))
    parser = build_parser()
    args = parser.parse_args(args_list)
    try:
        return int(args.func(args) or 0)
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return 0
    except Exception as exc:  # noqa: BLE001 - every failure becomes one line (see cli_errors)
        # not Settings(): the failure may be a setting that does not parse
        data_dir = Path(getattr(args, "data_dir", None) or os.environ.get("HIQA_DATA_DIR")
                        or "data")
        return report(exc, data_dir, debug)


if __name__ == "__main__":
    sys.exit(main())
