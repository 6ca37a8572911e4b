"""Files for CI systems: a JUnit XML report and a Markdown summary of a check (written atomically).

JUnit: one testcase per case x run (classname `regress.CASE`, name `strategy@transport`),
holding every metric and cross-check of that run; it fails when any of them does, with the
numbers in the failure message. A testcase's time is its run's wall seconds, measured once
(CheckResult.run_seconds); the suite's is the whole check's. The suite's properties `mode` and `mode_reason` say which
comparison ran (strict, float or spread, fingerprint.py); the Markdown says it under the title.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

from lionsim.numbers import plural
from lionsim.regress.check import CheckResult
from lionsim.regress.rows import Row, fmt, group_rows, shown_rows
from lionsim.reports.files import make_dir, write_atomic


def _line(row: Row) -> str:
    numbers = f"baseline {fmt(row.baseline)}, now {fmt(row.now)}, tolerance {fmt(row.tol)}"
    return f"{row.metric}: {row.verdict} ({numbers}){': ' + row.note if row.note else ''}"


def junit_xml(result: CheckResult, seconds: float) -> str:
    groups = group_rows(result.rows)
    failures = sum(any(r.failed for r in rows) for rows in groups.values())
    suites = ET.Element("testsuites", name="lionsim regress", tests=str(len(groups)), failures=str(failures))
    suite = ET.SubElement(suites, "testsuite", name="lionsim regress", tests=str(len(groups)),
                          failures=str(failures), errors="0", skipped="0", time=f"{seconds:.1f}")
    for (case, run), rows in groups.items():
        seconds_run = result.run_seconds.get((case, run))
        timed = {} if seconds_run is None else {"time": f"{seconds_run:.2f}"}
        testcase = ET.SubElement(suite, "testcase", classname=f"regress.{case}", name=run, **timed)
        bad = [r for r in rows if r.failed]
        if bad:
            failure = ET.SubElement(testcase, "failure", type="regression",
                                    message=f"{case} / {run}: " + "; ".join(r.note or r.verdict for r in bad))
            failure.text = "\n".join(_line(r) for r in bad)
        ET.SubElement(testcase, "system-out").text = "\n".join(_line(r) for r in rows)
    properties = ET.Element("properties")
    ET.SubElement(properties, "property", name="mode", value=result.mode)
    ET.SubElement(properties, "property", name="mode_reason", value=result.mode_reason)
    suite.insert(0, properties)  # JUnit puts properties first
    if result.warnings:
        ET.SubElement(suite, "system-err").text = "\n".join(result.warnings)
    ET.indent(suites)
    return ET.tostring(suites, encoding="unicode", xml_declaration=True) + "\n"


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def _table(rows: list[Row]) -> list[str]:
    lines = ["| case | run | metric | baseline | now | tolerance | verdict | note |",
             "|---|---|---|---:|---:|---:|---|---|"]
    lines += [f"| {r.case} | {r.run} | {r.metric} | {fmt(r.baseline)} | {fmt(r.now)} | {fmt(r.tol)} | "
              f"{r.verdict} | {_cell(r.note)} |" for r in rows]
    return lines


def markdown(result: CheckResult, seconds: float) -> str:
    failures = result.failures
    status = "FAIL" if failures else "PASS"
    lines = [f"# lionsim regress: {status}", "",
             f"{plural(len(result.cases), 'case')} ({', '.join(result.cases)}), "
             f"{result.checks_line}, "
             f"{len(failures)} failed, {seconds:.0f} s; baseline `{result.baseline}`.", "",
             f"Comparison {_cell(result.mode_line)}.", ""]
    if failures:
        lines += ["## Failures", "", *_table(failures), ""]
    if result.warnings:
        lines += ["## Warnings", "", *[f"- {_cell(w)}" for w in result.warnings], ""]
    if result.unguarded:
        lines += ["## Unguarded", "", "Checks any reading would pass: their tolerance reaches the metric's worst "
                  "value, so other metrics and the cross-checks guard these runs.", "", *_table(result.unguarded), ""]
    lines += ["## Runs", "", "Per run, its failing or improved checks, else the one closest to its tolerance.", "",
              *_table(shown_rows(result.rows)), ""]
    return "\n".join(lines)


def _write(path: Path, text: str) -> Path:
    path = Path(path)
    make_dir(path.parent)
    return write_atomic(path, lambda f: f.write(text))


def write_junit(path: Path, result: CheckResult, seconds: float) -> Path:
    return _write(path, junit_xml(result, seconds))


def write_markdown(path: Path, result: CheckResult, seconds: float) -> Path:
    return _write(path, markdown(result, seconds))
