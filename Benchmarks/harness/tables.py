"""Tables for a terminal (columns padded) or for a README (Markdown)."""

from .runs import failures, summary


def table_lines(header, rows, markdown=False, align=None):
    """The lines of a table. `align` has one letter per column, "l" or "r" (default: the first left, the rest
    right); Markdown right-aligns the "r" columns too."""
    rows = [[str(cell) for cell in row] for row in rows]
    header = [str(cell) for cell in header]
    align = align or "l" + "r" * (len(header) - 1)
    if markdown:
        lines = ["| " + " | ".join(header) + " |",
                 "|" + "|".join("---:" if side == "r" else "---" for side in align) + "|"]
        return lines + ["| " + " | ".join(row) + " |" for row in rows]
    widths = [max(len(row[column]) for row in [header] + rows) for column in range(len(header))]
    return ["  ".join(cell.rjust(width) if side == "r" else cell.ljust(width)
                      for cell, width, side in zip(row, widths, align)).rstrip()
            for row in [header] + rows]


def print_table(header, rows, markdown=False, align=None):
    for line in table_lines(header, rows, markdown, align):
        print(line)


def print_lines(lines, markdown=False):
    """Lines as a Markdown list, or as they are."""
    for line in lines:
        print(f"- {line}" if markdown else line)


def print_report(report, markdown=False):
    """A harness.Report: its title, the jobs' summary table, failed runs, notes and verdicts."""
    print(f"\n### {report.title}\n" if markdown else f"\n== {report.title} ==")
    if report.skipped:
        print(f"Skipped: {report.skipped}" if markdown else f"skipped: {report.skipped}")
        return
    print_table(*summary(report.jobs, report.connections, report.columns), markdown=markdown)
    if markdown:
        print()
    print_lines(failures(report.jobs), markdown)
    for note in report.notes:
        print(f"- Note: {note}" if markdown else f"note: {note}")
    for verdict in report.verdicts:
        print(f"- `{verdict.text}` **{verdict.status}**" if markdown else f"{verdict.text} {verdict.status}")
