// Package tracing follows one Network from its sync to Neutron's own log.
// Each sync is an OpenTelemetry span; each request it makes, to Neutron or
// to the API server, a child span; and every request to Neutron carries
// the sync's trace ID as OpenStack's global request ID
// (X-OpenStack-Request-ID: req-<trace ID as a UUID>), which neutron-server
// logs beside its own request ID. So one ID leads from a Network's
// condition or Event, or from a trace, to the lines of Neutron's log it
// caused.
//
// Tracing is off unless configured, the way Kubernetes components
// configure it: a TracingConfiguration (component-base's: an OTLP gRPC
// endpoint and a sampling rate per million) in --tracing-config-file.
// Off, syncs still get trace IDs, from a provider that samples and
// exports nothing, so that requests are correlated all the same.
package tracing

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/google/uuid"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
	"k8s.io/apimachinery/pkg/util/validation/field"
	componenttracing "k8s.io/component-base/tracing"
	tracingapi "k8s.io/component-base/tracing/api/v1"
	"k8s.io/klog/v2"
	"sigs.k8s.io/yaml"
)

// RequestIDHeader is the header that carries OpenStack's global request
// ID, which every OpenStack service logs (oslo.middleware's request_id).
const RequestIDHeader = "X-OpenStack-Request-ID"

// TraceparentAnnotation, on a Network, is a W3C traceparent that each of
// its syncs is linked to: the tool that changed the Network (a pipeline,
// a kubectl plugin) finds the syncs its change caused.
const TraceparentAnnotation = "samplecrd.k8s.io/traceparent"

// config is the file's content: a TracingConfiguration, as
// kube-apiserver's --tracing-config-file holds it.
type config struct {
	// APIVersion may be any that the Kubernetes components accept.
	APIVersion                      string `json:"apiVersion,omitempty"`
	Kind                            string `json:"kind,omitempty"`
	tracingapi.TracingConfiguration `json:",inline"`
}

// ReadConfig reads the TracingConfiguration of path; nil for "", tracing
// off. It is not k8s.io/apiserver's ReadTracingConfiguration, which
// accepts a misspelt field in silence and would bring the API server's
// own server package into the controller: a field it does not know is
// refused here, and the rest validated by component-base.
func ReadConfig(path string) (*tracingapi.TracingConfiguration, error) {
	if path == "" {
		return nil, nil
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading the tracing configuration: %w", err)
	}
	var c config
	if err := yaml.UnmarshalStrict(data, &c); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if c.Kind != "" && c.Kind != "TracingConfiguration" {
		return nil, fmt.Errorf("%s: kind %q, want TracingConfiguration", path, c.Kind)
	}
	if errs := tracingapi.ValidateTracingConfiguration(&c.TracingConfiguration, nil, field.NewPath("tracing")); len(errs) > 0 {
		return nil, fmt.Errorf("%s: %w", path, errs.ToAggregate())
	}
	return &c.TracingConfiguration, nil
}

// NewProvider returns the TracerProvider of service: component-base's
// (OTLP over gRPC, sampled at the configured rate or as the parent is)
// when cfg is set, else one that gives every span a trace ID and records
// and exports none.
func NewProvider(ctx context.Context, cfg *tracingapi.TracingConfiguration, service string) (componenttracing.TracerProvider, error) {
	if cfg == nil {
		return sdktrace.NewTracerProvider(sdktrace.WithSampler(sdktrace.NeverSample())), nil
	}
	tp, err := componenttracing.NewProvider(ctx, cfg, nil, []resource.Option{resource.WithAttributes(attribute.String("service.name", service))})
	if err != nil {
		return nil, fmt.Errorf("starting the tracing provider: %w", err)
	}
	return tp, nil
}

// Start returns the TracerProvider of service, configured by the file at
// path ("" for tracing off), and stop, which sends the spans still
// batched, for a few seconds at most, so that a collector that is away
// cannot hold up the exit the kubelet waits for: call it last.
func Start(ctx context.Context, path, service string) (_ componenttracing.TracerProvider, stop func(), _ error) {
	cfg, err := ReadConfig(path)
	if err != nil {
		return nil, nil, err
	}
	tp, err := NewProvider(ctx, cfg, service)
	if err != nil {
		return nil, nil, err
	}
	return tp, func() {
		flush, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		_ = tp.Shutdown(flush)
	}, nil
}

// RequestID is the global request ID of the trace in ctx:
// "req-" and the trace ID written as a UUID, which is the form OpenStack
// accepts; "" when ctx has no trace.
func RequestID(ctx context.Context) string {
	id := trace.SpanContextFromContext(ctx).TraceID()
	if !id.IsValid() {
		return ""
	}
	return "req-" + uuid.UUID(id).String()
}

// Transport is rt with a child span for each request made within a
// trace (otelhttp, which puts the W3C trace context in its headers).
// Requests made outside one — an informer's list and watch, a Lease's
// renewal, Neutron's periodic list — are no sync's, and go as they are.
func Transport(tp trace.TracerProvider, rt http.RoundTripper) http.RoundTripper {
	traced := componenttracing.WrapperFor(tp)(rt)
	return roundTripper(func(req *http.Request) (*http.Response, error) {
		if !trace.SpanContextFromContext(req.Context()).IsValid() {
			return rt.RoundTrip(req)
		}
		return traced.RoundTrip(req)
	})
}

// OpenStack is Transport for an OpenStack service: each request made
// within a trace also carries the trace's global request ID, and the
// service's own ID of it (its answer's X-Openstack-Request-Id, which every
// line of its log about the request names, where the global one may be
// missing) goes on the request's span, as the attribute
// openstack.request_id, and in the sync's log.
func OpenStack(tp trace.TracerProvider, rt http.RoundTripper) http.RoundTripper {
	return Transport(tp, roundTripper(func(req *http.Request) (*http.Response, error) {
		id := RequestID(req.Context())
		if id == "" {
			return rt.RoundTrip(req)
		}
		if req.Header.Get(RequestIDHeader) == "" {
			req = req.Clone(req.Context())
			req.Header.Set(RequestIDHeader, id)
		}
		resp, err := rt.RoundTrip(req)
		if err == nil {
			answered := resp.Header.Get(RequestIDHeader)
			trace.SpanFromContext(req.Context()).SetAttributes(attribute.String("openstack.request_id", answered))
			klog.FromContext(req.Context()).V(4).Info("OpenStack answered", "method", req.Method, "path", req.URL.Path,
				"status", resp.StatusCode, answeredKey, answered)
		}
		return resp, err
	}))
}

// answeredKey names, in the log, the service's own ID of a request.
const answeredKey = "openstackRequestID"

type roundTripper func(*http.Request) (*http.Response, error)

func (f roundTripper) RoundTrip(req *http.Request) (*http.Response, error) { return f(req) }

// LinkFrom links the span of ctx to the trace context of annotations'
// TraceparentAnnotation, when it holds a valid one.
func LinkFrom(ctx context.Context, annotations map[string]string) {
	parent, ok := annotations[TraceparentAnnotation]
	if !ok {
		return
	}
	carrier := propagation.MapCarrier{"traceparent": strings.TrimSpace(parent)}
	linked := trace.SpanContextFromContext(propagation.TraceContext{}.Extract(context.Background(), carrier))
	if linked.IsValid() {
		trace.SpanFromContext(ctx).AddLink(trace.Link{SpanContext: linked, Attributes: []attribute.KeyValue{attribute.String("from", TraceparentAnnotation)}})
	}
}
