// Package deploy checks Marquee's deployment files. It is a module of its
// own so that the main module carries no Kubernetes dependency.
package deploy

import (
	"bytes"
	"os/exec"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"sigs.k8s.io/yaml"
)

// TestManifestsDecodeStrictly renders the example overlay with kubectl
// kustomize and decodes every object into its k8s.io/api type, refusing
// unknown or misspelled fields and wrong types; then checks what the
// deployment promises: probes, a preStop pause, limits and a restricted
// security context.
func TestManifestsDecodeStrictly(t *testing.T) {
	kubectl, err := exec.LookPath("kubectl")
	if err != nil {
		t.Skip("no kubectl: install it to render deploy/kubernetes (kubectl kustomize)")
	}
	out, err := exec.Command(kubectl, "kustomize", "kubernetes/overlays/example").CombinedOutput()
	if err != nil {
		t.Fatalf("kubectl kustomize: %v\n%s", err, out)
	}
	kinds := map[string]int{}
	var dep appsv1.Deployment
	for _, doc := range bytes.Split(out, []byte("\n---\n")) {
		if len(bytes.TrimSpace(doc)) == 0 {
			continue
		}
		var meta struct{ Kind string }
		if err := yaml.Unmarshal(doc, &meta); err != nil {
			t.Fatalf("a rendered object is not YAML: %v\n%s", err, doc)
		}
		var obj any
		switch meta.Kind {
		case "Deployment":
			obj = &dep
		case "Service":
			obj = &corev1.Service{}
		case "ConfigMap":
			obj = &corev1.ConfigMap{}
		case "Secret":
			obj = &corev1.Secret{}
		case "PodDisruptionBudget":
			obj = &policyv1.PodDisruptionBudget{}
		case "HorizontalPodAutoscaler":
			obj = &autoscalingv2.HorizontalPodAutoscaler{}
		default:
			t.Fatalf("rendered a %q, which this test does not know", meta.Kind)
		}
		if err := yaml.UnmarshalStrict(doc, obj); err != nil {
			t.Errorf("%s does not decode strictly into its type: %v", meta.Kind, err)
		}
		kinds[meta.Kind]++
	}
	for _, k := range []string{"Deployment", "Service", "ConfigMap", "Secret", "PodDisruptionBudget", "HorizontalPodAutoscaler"} {
		if kinds[k] != 1 {
			t.Errorf("rendered %d %s; want 1", kinds[k], k)
		}
	}
	if len(dep.Spec.Template.Spec.Containers) != 1 {
		t.Fatalf("deployment has %d containers; want 1", len(dep.Spec.Template.Spec.Containers))
	}
	c := dep.Spec.Template.Spec.Containers[0]
	switch {
	case c.ReadinessProbe == nil || c.ReadinessProbe.HTTPGet == nil || c.ReadinessProbe.HTTPGet.Path != "/readyz":
		t.Error("readiness is not GET /readyz")
	case c.LivenessProbe == nil || c.LivenessProbe.HTTPGet == nil || c.LivenessProbe.HTTPGet.Path != "/healthz":
		t.Error("liveness is not GET /healthz")
	case c.Lifecycle == nil || c.Lifecycle.PreStop == nil || c.Lifecycle.PreStop.Sleep == nil:
		t.Error("no preStop sleep for a graceful drain")
	case c.Resources.Requests.Cpu().IsZero() || c.Resources.Limits.Memory().IsZero():
		t.Error("no CPU request or memory limit")
	case c.SecurityContext == nil || c.SecurityContext.ReadOnlyRootFilesystem == nil || !*c.SecurityContext.ReadOnlyRootFilesystem ||
		c.SecurityContext.AllowPrivilegeEscalation == nil || *c.SecurityContext.AllowPrivilegeEscalation:
		t.Error("the container's security context is not read-only without privilege escalation")
	case dep.Spec.Template.Spec.SecurityContext == nil || dep.Spec.Template.Spec.SecurityContext.RunAsNonRoot == nil ||
		!*dep.Spec.Template.Spec.SecurityContext.RunAsNonRoot:
		t.Error("the pod may run as root")
	}
	if !strings.Contains(c.Image, ":v1.0.0") {
		t.Errorf("the overlay's image pin did not apply: %s", c.Image)
	}
}
