// The report files `--format` can ask for: the two CSVs, the compliance Markdown, its HTML rendition.
export const REPORT_FORMATS = ["csv", "md", "html"] as const;

export type ReportFormat = (typeof REPORT_FORMATS)[number];
