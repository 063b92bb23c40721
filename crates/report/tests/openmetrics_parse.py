# Parse an OpenMetrics text file with the format's reference parser (the Prometheus
# Python client, Debian's python3-prometheus-client) and print every family as JSON:
# name, type, unit, help and samples (values as Python's repr, timestamps as
# [seconds, nanoseconds]). Used by crates/report/tests/openmetrics.rs and
# crates/fwbench/tests/report_cli.rs; it exits non-zero when the parser refuses the file.
import json
import sys

from prometheus_client.openmetrics.parser import text_string_to_metric_families

out = []
with open(sys.argv[1]) as f:
    text = f.read()
for fam in text_string_to_metric_families(text):
    out.append({
        "name": fam.name,
        "type": fam.type,
        "unit": fam.unit,
        "help": fam.documentation,
        "samples": [{
            "name": s.name,
            "labels": s.labels,
            "value": repr(float(s.value)),
            "ts": [s.timestamp.sec, s.timestamp.nsec],
        } for s in fam.samples],
    })
print(json.dumps(out))
