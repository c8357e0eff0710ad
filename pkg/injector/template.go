// Package injector merges a sidecar, declared once in a ConfigMap, into the
// Pods that ask for it. It is the Envoy "Initializer" of the design
// documents, rebuilt as a mutating admission webhook: Kubernetes removed the
// alpha Initializer API (metadata.initializers, InitializerConfiguration) in
// 1.14, and admission webhooks are how a Pod is changed on its way into the
// API server today.
package injector

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"text/template"
	"text/template/parse"
	"time"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"
)

// ConfigKey is the ConfigMap key that holds the template.
const ConfigKey = "config"

// maxRenderedBytes and maxRenderTime bound one rendering: a template is
// trusted (a cluster administrator writes it), but a slip must cost one
// refused Pod, not the webhook. Ranges over numbers, the one way to loop
// without data, are refused when the template is read (checkTree).
const (
	maxRenderedBytes = 1 << 20
	maxRenderTime    = time.Second
)

// maxInt is the largest value of the template function int: enough for a
// port or a count, too little to loop long on.
const maxInt = 1 << 20

// Template is the value of the ConfigMap's "config" key: YAML of the
// design documents' layout (containers:, volumes:), which may also be a Go
// text/template over the Pod's metadata (PodData). A template without
// {{ }} is plain YAML and renders to itself, so the design documents'
// ConfigMap works unchanged.
type Template struct {
	text *template.Template
	// Hash identifies the template's text: recorded in the status
	// annotation of every Pod it was injected into.
	Hash string
}

// Sidecar is what a Template renders to for one Pod: what gets merged in.
type Sidecar struct {
	Containers []corev1.Container `json:"containers"`
	Volumes    []corev1.Volume    `json:"volumes,omitempty"`
	// NativeSidecar injects the containers as init containers with
	// restartPolicy: Always, Kubernetes' native sidecars (1.29+): they
	// start before the Pod's own init containers, and they do not keep a
	// Job's Pod from completing, because the kubelet stops them once the
	// main containers have exited.
	NativeSidecar bool `json:"nativeSidecar,omitempty"`
}

// PodData is what a template sees of the Pod. Name is empty for a Pod made
// from a workload's template (the API server names it after admission);
// GenerateName is then set.
type PodData struct {
	Name, GenerateName, Namespace string
	Labels, Annotations           map[string]string
}

// templateFuncs are the only functions a template has beside text/template's
// built-ins, none of which reads the environment, files or the network.
var templateFuncs = template.FuncMap{
	// default returns value, or fallback when value is empty:
	// {{ .Labels.app | default "unknown" }}.
	"default": func(fallback, value any) any {
		if value == nil || reflect.ValueOf(value).IsZero() {
			return fallback
		}
		return value
	},
	// quote makes a YAML double-quoted string of its argument, safe
	// whatever a label or annotation holds. Every printed value is quoted
	// so unless it says otherwise (autoQuote).
	"quote": quote,
	// int reads its argument as an integer from 0 to maxInt, for a field
	// that is a number (containerPort): a number cannot change the YAML
	// around it, so it is printed as it is.
	"int": func(value any) (int, error) {
		n, err := strconv.Atoi(strings.TrimSpace(fmt.Sprint(value)))
		if err != nil || n < 0 || n > maxInt {
			return 0, fmt.Errorf("int: %q is not an integer from 0 to %d", fmt.Sprint(value), maxInt)
		}
		return n, nil
	},
	"lower": strings.ToLower,
	"upper": strings.ToUpper,
}

// quote is the YAML double-quoted scalar of value, which YAML reads back
// as the very same string whatever it holds (quotes, newlines, colons,
// "- " and "{"), so that a Pod's label or annotation can never add a
// field, a container or a volume to its sidecar. strconv.Quote does it:
// its escapes (\n, \", \xNN, \uNNNN, \UNNNNNNNN) are all YAML's too, and
// it escapes every rune Go cannot print, which covers every one YAML
// refuses in its input. FuzzRender holds it to that.
func quote(value any) string { return strconv.Quote(fmt.Sprint(value)) }

// safeEnding are the functions whose output is already safe to print
// into YAML as it is.
var safeEnding = map[string]bool{"quote": true, "int": true}

// autoQuote makes every action that prints end with quote, unless it ends
// with a function of safeEnding, as html/template adds its escapers: what
// a template prints of a Pod lands in the YAML as one string scalar,
// whatever the Pod's metadata says. A template writes
// {{ printf "envoy:%s" .Labels.v }} for a string made of parts, and
// {{ .Annotations.port | int }} for a number.
func autoQuote(t *parse.Tree, n parse.Node) {
	switch n := n.(type) {
	case *parse.ListNode:
		if n == nil {
			return
		}
		for _, c := range n.Nodes {
			autoQuote(t, c)
		}
	case *parse.ActionNode:
		if len(n.Pipe.Decl) > 0 {
			return // {{ $x := ... }} prints nothing
		}
		last := n.Pipe.Cmds[len(n.Pipe.Cmds)-1]
		if id, ok := last.Args[0].(*parse.IdentifierNode); ok && safeEnding[id.Ident] {
			return
		}
		q := parse.NewIdentifier("quote").SetTree(t).SetPos(n.Pos)
		n.Pipe.Cmds = append(n.Pipe.Cmds, &parse.CommandNode{NodeType: parse.NodeCommand, Pos: n.Pos, Args: []parse.Node{q}})
	case *parse.IfNode:
		autoQuote(t, n.List)
		autoQuote(t, n.ElseList)
	case *parse.RangeNode:
		autoQuote(t, n.List)
		autoQuote(t, n.ElseList)
	case *parse.WithNode:
		autoQuote(t, n.List)
		autoQuote(t, n.ElseList)
	}
}

// checkRanges refuses a range over a number: the one loop whose length no
// Pod's data bounds, and which can run without printing or calling
// anything that the render's time limit sees.
func checkRanges(n parse.Node) error {
	switch n := n.(type) {
	case *parse.ListNode:
		if n == nil {
			return nil
		}
		for _, c := range n.Nodes {
			if err := checkRanges(c); err != nil {
				return err
			}
		}
	case *parse.RangeNode:
		for _, cmd := range n.Pipe.Cmds {
			for _, arg := range cmd.Args {
				if _, ok := arg.(*parse.NumberNode); ok {
					return fmt.Errorf("%s: a range over a number is not allowed in a sidecar template", n.String())
				}
				if id, ok := arg.(*parse.IdentifierNode); ok && (id.Ident == "int" || id.Ident == "len") {
					return fmt.Errorf("%s: a range over a number is not allowed in a sidecar template", n.String())
				}
			}
		}
		return errors.Join(checkRanges(n.List), checkRanges(n.ElseList))
	case *parse.IfNode:
		return errors.Join(checkRanges(n.List), checkRanges(n.ElseList))
	case *parse.WithNode:
		return errors.Join(checkRanges(n.List), checkRanges(n.ElseList))
	}
	return nil
}

// ParseTemplate reads a template. It is rendered once, for a Pod with no
// labels or annotations in the namespace "default", so that a template
// that cannot work is refused when it is read (a ConfigMap edit, or
// `inject --template`), not at the first Pod.
func ParseTemplate(data string) (*Template, error) {
	text, err := template.New(ConfigKey).Funcs(templateFuncs).Parse(data)
	if err != nil {
		return nil, fmt.Errorf("the template is not a valid Go template: %w", err)
	}
	for _, tt := range text.Templates() {
		if tt.Tree == nil {
			continue
		}
		if err := checkRanges(tt.Tree.Root); err != nil {
			return nil, err
		}
		autoQuote(tt.Tree, tt.Tree.Root)
	}
	sum := sha256.Sum256([]byte(data))
	t := &Template{text: text, Hash: hex.EncodeToString(sum[:8])}
	if _, err := t.Render(PodData{Namespace: "default"}); err != nil {
		return nil, err
	}
	return t, nil
}

// Render fills the template in for one Pod and reads the result, refusing
// unknown fields (a misspelt "volumeMount" would otherwise vanish silently)
// and sidecars that would inject nothing or something unnamed.
func (t *Template) Render(pod PodData) (*Sidecar, error) {
	out := &limitedBuffer{limit: maxRenderedBytes, deadline: time.Now().Add(maxRenderTime)}
	if err := t.text.Execute(out, pod); err != nil {
		return nil, fmt.Errorf("rendering the template: %w", err)
	}
	s := &Sidecar{}
	if err := yaml.UnmarshalStrict(out.Bytes(), s); err != nil {
		return nil, fmt.Errorf("the template is not valid YAML of containers and volumes: %w", err)
	}
	if len(s.Containers) == 0 {
		return nil, errors.New("the template has no containers")
	}
	for i, c := range s.Containers {
		if c.Name == "" || c.Image == "" {
			return nil, fmt.Errorf("template container %d needs a name and an image", i)
		}
	}
	for i, v := range s.Volumes {
		if v.Name == "" {
			return nil, fmt.Errorf("template volume %d needs a name", i)
		}
	}
	return s, nil
}

// TemplateFromConfigMap reads the template from a ConfigMap.
func TemplateFromConfigMap(cm *corev1.ConfigMap) (*Template, error) {
	data, ok := cm.Data[ConfigKey]
	if !ok {
		return nil, fmt.Errorf("ConfigMap %s/%s has no %q key", cm.Namespace, cm.Name, ConfigKey)
	}
	t, err := ParseTemplate(data)
	if err != nil {
		return nil, fmt.Errorf("ConfigMap %s/%s: %w", cm.Namespace, cm.Name, err)
	}
	return t, nil
}

// limitedBuffer is a bytes.Buffer that refuses to grow past limit, or to
// be written after deadline.
type limitedBuffer struct {
	bytes.Buffer
	limit    int
	deadline time.Time
}

func (b *limitedBuffer) Write(p []byte) (int, error) {
	if b.Len()+len(p) > b.limit {
		return 0, fmt.Errorf("the rendered template passes %d bytes", b.limit)
	}
	if time.Now().After(b.deadline) {
		return 0, fmt.Errorf("rendering the template took more than %v", maxRenderTime)
	}
	return b.Buffer.Write(p)
}
