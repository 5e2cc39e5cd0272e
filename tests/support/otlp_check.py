"""Strictly parse OTLP/JSON trace files with the official protobuf definitions.

    python otlp_check.py FILE...

Every line must be one ExportTraceServiceRequest that google.protobuf.json_format.Parse
accepts with unknown fields as errors. OTLP/JSON spells trace and span ids as hex where
protobuf's JSON mapping expects base64, so ids are checked (32/16 hex digits, parentSpanId
also empty) and converted first, exactly as an OTLP receiver does. Prints one summary line per
file; exits 1 on the first bad line with the file, line number and reason.
"""

import base64
import json
import re
import sys

from google.protobuf import json_format
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

HEX = {"traceId": 32, "spanId": 16, "parentSpanId": 16}


def ids_to_base64(obj, where):
    for key, n in HEX.items():
        if key not in obj:
            continue
        v = obj[key]
        if key == "parentSpanId" and v == "":
            continue
        if not isinstance(v, str) or not re.fullmatch("[0-9a-f]{%d}" % n, v):
            raise ValueError(f"{where}.{key} is not {n} lowercase hex digits: {v!r}")
        if set(v) == {"0"}:
            raise ValueError(f"{where}.{key} is all zero")
        obj[key] = base64.b64encode(bytes.fromhex(v)).decode()


def check_line(text):
    obj = json.loads(text)
    spans = 0
    for i, rs in enumerate(obj.get("resourceSpans") or []):
        for j, ss in enumerate(rs.get("scopeSpans") or []):
            for k, span in enumerate(ss.get("spans") or []):
                where = f"resourceSpans[{i}].scopeSpans[{j}].spans[{k}]"
                ids_to_base64(span, where)
                for li, link in enumerate(span.get("links") or []):
                    ids_to_base64(link, f"{where}.links[{li}]")
                spans += 1
    msg = json_format.Parse(json.dumps(obj), ExportTraceServiceRequest(), ignore_unknown_fields=False)
    parsed = sum(len(ss.spans) for rs in msg.resource_spans for ss in rs.scope_spans)
    if parsed != spans:
        raise ValueError(f"{spans} spans in the JSON, {parsed} after parsing")
    for rs in msg.resource_spans:
        for ss in rs.scope_spans:
            for s in ss.spans:
                if len(s.trace_id) != 16 or len(s.span_id) != 8:
                    raise ValueError(f"span {s.name!r}: id lengths {len(s.trace_id)}/{len(s.span_id)}")
                if s.end_time_unix_nano < s.start_time_unix_nano:
                    raise ValueError(f"span {s.name!r} ends before it starts")
    return spans


def main(paths):
    for path in paths:
        lines = spans = 0
        with open(path, encoding="utf-8") as f:
            for n, text in enumerate(f, 1):
                try:
                    spans += check_line(text)
                except Exception as e:  # noqa: BLE001 - report any failure with its place
                    print(f"{path}:{n}: {type(e).__name__}: {e}")
                    return 1
                lines += 1
        print(f"ok {path}: {lines} lines, {spans} spans")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
