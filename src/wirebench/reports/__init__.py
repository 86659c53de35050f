"""What people read: the summary and scorecard, statistics, report.md and report.html,
compare, history and the gate."""
