"""What users run: the `tilesim` CLI (cli), the bandwidth report (report; report_text for the
terminal and Markdown, report_html for the page, report.schema.json for its JSON), the claims
of the source documents measured (claims), image diffs (diff), heat maps (heatmaps) and writing
outputs atomically (output). They consume what pipelines.frame.run returns and only format it."""
