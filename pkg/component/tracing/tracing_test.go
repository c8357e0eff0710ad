package tracing

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"go.opentelemetry.io/otel/attribute"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
)

// TestARequestCarriesItsSyncsTrace: a request made in a sync's span is a
// child span of it, and carries the trace to the server twice: as W3C
// traceparent, and as OpenStack's global request ID, the trace ID written
// as a UUID, which the sync's condition names too.
func TestARequestCarriesItsSyncsTrace(t *testing.T) {
	spans := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spans))
	var got http.Header
	const neutronsOwn = "req-0e0e0e0e-0e0e-4e0e-8e0e-0e0e0e0e0e0e"
	server := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got = r.Header.Clone()
		w.Header().Set("X-Openstack-Request-Id", neutronsOwn)
	}))
	defer server.Close()

	ctx, sync := tp.Tracer("test").Start(context.Background(), "Sync Network")
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, server.URL+"/v2.0/networks", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := (&http.Client{Transport: OpenStack(tp, http.DefaultTransport)}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	sync.End()

	traceID := sync.SpanContext().TraceID().String()
	want := "req-" + traceID[:8] + "-" + traceID[8:12] + "-" + traceID[12:16] + "-" + traceID[16:20] + "-" + traceID[20:]
	if RequestID(ctx) != want || got.Get(RequestIDHeader) != want {
		t.Errorf("request ID %q, sent %q; want %q", RequestID(ctx), got.Get(RequestIDHeader), want)
	}
	if !strings.Contains(got.Get("traceparent"), traceID) {
		t.Errorf("traceparent %q does not carry trace %s", got.Get("traceparent"), traceID)
	}
	ended := spans.Ended()
	if len(ended) != 2 || ended[0].Parent().SpanID() != sync.SpanContext().SpanID() {
		t.Fatalf("spans %v, want the request's as the sync's child", ended)
	}
	if own := ended[0].Attributes(); len(own) == 0 || !slices.ContainsFunc(own, func(a attribute.KeyValue) bool {
		return a.Key == "openstack.request_id" && a.Value.AsString() == neutronsOwn
	}) {
		t.Errorf("the request's span %v does not record the service's own request ID %s", own, neutronsOwn)
	}
	if RequestID(context.Background()) != "" {
		t.Error("a context without a trace has a request ID")
	}
}

// TestTracingOffStillNamesRequests: without a configuration, a sync's
// span has a trace ID (to name its requests by) and is neither recorded
// nor exported.
func TestTracingOffStillNamesRequests(t *testing.T) {
	tp, err := NewProvider(context.Background(), nil, "test")
	if err != nil {
		t.Fatal(err)
	}
	ctx, span := tp.Tracer("test").Start(context.Background(), "Sync Network")
	defer span.End()
	if RequestID(ctx) == "" || span.IsRecording() {
		t.Errorf("request ID %q, recording %v: want an ID, and no recording", RequestID(ctx), span.IsRecording())
	}
}

// TestReadConfig reads kube-apiserver's TracingConfiguration file, and
// refuses what it would refuse.
func TestReadConfig(t *testing.T) {
	for _, tt := range []struct{ name, file, wantErr string }{
		{"kube-apiserver's", "apiVersion: apiserver.config.k8s.io/v1\nkind: TracingConfiguration\nendpoint: 127.0.0.1:4317\nsamplingRatePerMillion: 1000000\n", ""},
		{"a field misspelt", "endpoint: 127.0.0.1:4317\nsamplingRatePerMilion: 100\n", "unknown field"},
		{"another kind", "kind: KubeletConfiguration\n", "want TracingConfiguration"},
		{"a rate above a million", "samplingRatePerMillion: 1000001\n", "less than or equal to one million"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "tracing.yaml")
			if err := os.WriteFile(path, []byte(tt.file), 0o600); err != nil {
				t.Fatal(err)
			}
			cfg, err := ReadConfig(path)
			if tt.wantErr == "" && (err != nil || *cfg.Endpoint != "127.0.0.1:4317" || *cfg.SamplingRatePerMillion != 1000000) {
				t.Errorf("ReadConfig: %+v, %v", cfg, err)
			}
			if tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)) {
				t.Errorf("ReadConfig: %v, want an error with %q", err, tt.wantErr)
			}
		})
	}
}

// TestASyncLinksTheTraceItsNetworkNames: the traceparent annotation of a
// Network links each of its syncs to the trace of whoever changed it.
func TestASyncLinksTheTraceItsNetworkNames(t *testing.T) {
	spans := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spans))
	const parent = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
	for _, annotations := range []map[string]string{{TraceparentAnnotation: parent}, {TraceparentAnnotation: "not a traceparent"}, nil} {
		ctx, span := tp.Tracer("test").Start(context.Background(), "Sync Network")
		LinkFrom(ctx, annotations)
		span.End()
	}
	ended := spans.Ended()
	if links := ended[0].Links(); len(links) != 1 || links[0].SpanContext.TraceID().String() != "0af7651916cd43dd8448eb211c80319c" {
		t.Errorf("links %v, want the annotation's trace", links)
	}
	for _, s := range ended[1:] {
		if len(s.Links()) != 0 {
			t.Errorf("a sync without a valid traceparent has links %v", s.Links())
		}
	}
}

// TestARequestOutsideASyncIsNotTraced: an informer's watch or a Lease's
// renewal is no sync's: no span, no request ID.
func TestARequestOutsideASyncIsNotTraced(t *testing.T) {
	spans := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spans))
	var got http.Header
	server := httptest.NewServer(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) { got = r.Header.Clone() }))
	defer server.Close()
	resp, err := (&http.Client{Transport: OpenStack(tp, http.DefaultTransport)}).Get(server.URL)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if len(spans.Ended()) != 0 || got.Get(RequestIDHeader) != "" || got.Get("traceparent") != "" {
		t.Errorf("a request outside a sync made spans %v and carried %q, %q", spans.Ended(), got.Get(RequestIDHeader), got.Get("traceparent"))
	}
}
