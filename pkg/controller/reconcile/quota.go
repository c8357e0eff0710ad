package reconcile

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	samplecrdv1 "github.com/samplecrd/network-controller/pkg/apis/samplecrd/v1"
	"github.com/samplecrd/network-controller/pkg/controller/neutron"
)

// quotaCondition is the QuotaNearlyFull condition that a project whose
// quota reads q gives each of its Networks: nil while nothing is nearly
// full. Its message holds only Neutron's counts, never a name: the
// project is shared, and how full it is is all a tenant learns of what
// others hold there.
func quotaCondition(q neutron.Quota) *metav1.Condition {
	full := q.NearlyFull()
	if len(full) == 0 {
		return nil
	}
	used := make([]string, len(full))
	for i, r := range full {
		used[i] = fmt.Sprintf("%s %d of %d", r.Resource, r.InUse, r.Limit)
	}
	return &metav1.Condition{
		Type:   samplecrdv1.ConditionQuotaNearlyFull,
		Status: metav1.ConditionTrue,
		Reason: samplecrdv1.QuotaNearlyFullReason,
		Message: fmt.Sprintf("The project has used %d%% or more of its Neutron quota of %s. Its creates are refused once a quota is full: "+
			"ask its operator to raise the quota, or delete what it no longer needs.", neutron.NearlyFullPercent, strings.Join(used, ", ")),
	}
}

// noProjectsQuota is the quota of a pass refused its project
// (ProjectRefused): the controller acts in no project for the Network,
// so no project's quota warns it, and a QuotaNearlyFull it had goes.
func noProjectsQuota() *neutron.Quota {
	q := neutron.Unlimited
	return &q
}

// nextQuotaCondition sets the QuotaNearlyFull condition of a Network of
// generation in conditions from q, the project's quota as the latest list
// read it, and returns the condition to apply (nil: none) and whether
// conditions changed. A nil q (no quota read yet, or a pass that did not
// ask) keeps the condition as it is: not knowing is no reason to say the
// project has room.
func nextQuotaCondition(conditions *[]metav1.Condition, generation int64, q *neutron.Quota) (_ *metav1.Condition, changed bool) {
	if q == nil {
		return meta.FindStatusCondition(*conditions, samplecrdv1.ConditionQuotaNearlyFull), false
	}
	want := quotaCondition(*q)
	if want == nil {
		return nil, meta.RemoveStatusCondition(conditions, samplecrdv1.ConditionQuotaNearlyFull)
	}
	want.ObservedGeneration = generation
	changed = meta.SetStatusCondition(conditions, *want)
	return meta.FindStatusCondition(*conditions, samplecrdv1.ConditionQuotaNearlyFull), changed
}
