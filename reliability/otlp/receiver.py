"""A real OTLP/HTTP receiver for the tests: decodes what the pack service
exports (protobuf, with the `opentelemetry-proto` package) and prints it.

    receiver.py RAW_FILE

Listens on 127.0.0.1, any free port, and prints `listening PORT` first.
Then one JSON line per span (`{"kind": "span", ...}`, ids in hex) and per
metric data point (`{"kind": "point", ...}`), as they come. Every request
body is also appended, raw, to RAW_FILE, so that a test can look for a
value in all that was sent. Answers every export 200 with an empty
response.
"""

import json
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from google.protobuf.json_format import MessageToDict
from opentelemetry.proto.collector.metrics.v1 import metrics_service_pb2
from opentelemetry.proto.collector.trace.v1 import trace_service_pb2

RAW = sys.argv[1]


def value(any_value):
    """An attribute's value as plain JSON."""
    kind = any_value.WhichOneof("value")
    if kind is None:
        return None
    if kind == "array_value":
        return [value(v) for v in any_value.array_value.values]
    if kind == "kvlist_value":
        return attributes(any_value.kvlist_value.values)
    if kind == "bytes_value":
        return any_value.bytes_value.hex()
    return getattr(any_value, kind)


def attributes(pairs):
    return {pair.key: value(pair.value) for pair in pairs}


def emit(line):
    print(json.dumps(line, sort_keys=True), flush=True)


def spans(body):
    request = trace_service_pb2.ExportTraceServiceRequest()
    request.ParseFromString(body)
    for resource_spans in request.resource_spans:
        resource = attributes(resource_spans.resource.attributes)
        for scope_spans in resource_spans.scope_spans:
            for span in scope_spans.spans:
                emit({
                    "kind": "span",
                    "name": span.name,
                    "traceId": span.trace_id.hex(),
                    "spanId": span.span_id.hex(),
                    "parentSpanId": span.parent_span_id.hex(),
                    "spanKind": span.kind,
                    "status": MessageToDict(span.status),
                    "attributes": attributes(span.attributes),
                    "events": [
                        {"name": e.name, "attributes": attributes(e.attributes)}
                        for e in span.events
                    ],
                    "scope": scope_spans.scope.name,
                    "resource": resource,
                    "startNs": span.start_time_unix_nano,
                    "endNs": span.end_time_unix_nano,
                })


def points(body):
    request = metrics_service_pb2.ExportMetricsServiceRequest()
    request.ParseFromString(body)
    for resource_metrics in request.resource_metrics:
        resource = attributes(resource_metrics.resource.attributes)
        for scope_metrics in resource_metrics.scope_metrics:
            for metric in scope_metrics.metrics:
                data = metric.WhichOneof("data")
                for point in getattr(metric, data).data_points:
                    line = {
                        "kind": "point",
                        "metric": metric.name,
                        "unit": metric.unit,
                        "type": data,
                        "attributes": attributes(point.attributes),
                        "resource": resource,
                    }
                    if data == "histogram":
                        line["count"] = point.count
                        line["sum"] = point.sum
                    else:
                        line["value"] = getattr(point, point.WhichOneof("value"))
                    emit(line)


class Receiver(BaseHTTPRequestHandler):
    def do_POST(self):
        length = int(self.headers.get("content-length") or 0)
        body = self.rfile.read(length)
        with open(RAW, "ab") as raw:
            raw.write(body)
        if self.path == "/v1/traces":
            spans(body)
            answer = trace_service_pb2.ExportTraceServiceResponse()
        elif self.path == "/v1/metrics":
            points(body)
            answer = metrics_service_pb2.ExportMetricsServiceResponse()
        else:
            self.send_response(404)
            self.end_headers()
            return
        out = answer.SerializeToString()
        self.send_response(200)
        self.send_header("content-type", "application/x-protobuf")
        self.send_header("content-length", str(len(out)))
        self.end_headers()
        self.wfile.write(out)

    def log_message(self, *args):
        pass


server = ThreadingHTTPServer(("127.0.0.1", 0), Receiver)
print(f"listening {server.server_address[1]}", flush=True)
server.serve_forever()
