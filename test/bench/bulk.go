package main

import (
	"context"
	"fmt"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/networks"
	"k8s.io/apimachinery/pkg/util/uuid"

	"github.com/samplecrd/network-controller/pkg/controller/neutron"
)

// bulkLoop makes count pairs as rawNeutron does, named and described as
// the controller names and describes its own, but batch to a request:
// one bulk POST of batch networks, then one of their batch subnets,
// parallel batches at a time. With batch × parallel the controller's
// --workers, as many pairs are in flight as its workers make at once: the
// ceiling of a controller that gathered its workers' pending creates into
// bulk requests (issue 53). It returns pairs per second, and deletes them again, untimed.
// Neutron's bulk create is atomic (all of a request or none), which a
// controller would have to undo with single creates when one element is
// refused; the loop is the upper bound, and sends nothing Neutron
// refuses.
func bulkLoop(ctx context.Context, client *gophercloud.ServiceClient, parallel, count, batch int, waits *settled) (rate float64, err error) {
	mark, err := neutron.NewMark("bench-bulk", uuid.NewUUID())
	if err != nil {
		return 0, err
	}
	batches := (count + batch - 1) / batch
	created := make([][]string, batches)
	if err := waits.wait(ctx); err != nil {
		return 0, err
	}
	elapsed, err := inParallel(batches, parallel, func(b int) error {
		first, last := b*batch, min((b+1)*batch, count)
		nets := make([]map[string]any, 0, last-first)
		names := make([]string, 0, last-first)
		for i := first; i < last; i++ {
			name := mark.ResourceName(neutron.Owner{Namespace: "bench-bulk", Name: fmt.Sprintf("net-%05d", i), UID: uuid.NewUUID()})
			names = append(names, name)
			nets = append(nets, map[string]any{"name": name, "description": mark.Description()})
		}
		ids, err := bulkPost(ctx, client, "networks", nets)
		created[b] = ids
		if err != nil {
			return err
		}
		subs := make([]map[string]any, 0, len(ids))
		for k, id := range ids {
			i := first + k
			subs = append(subs, map[string]any{"network_id": id, "name": names[k], "description": mark.Description(), "ip_version": 4,
				"cidr": fmt.Sprintf("172.%d.%d.0/24", 16+i/256, i%256), "gateway_ip": fmt.Sprintf("172.%d.%d.1", 16+i/256, i%256)})
		}
		_, err = bulkPost(ctx, client, "subnets", subs)
		return err
	})
	var all []string
	for _, ids := range created {
		all = append(all, ids...)
	}
	if waitErr := waits.wait(ctx); waitErr != nil && err == nil {
		err = waitErr
	}
	if _, deleteErr := inParallel(len(all), parallel, func(i int) error {
		return networks.Delete(ctx, client, all[i]).ExtractErr()
	}); deleteErr != nil && err == nil {
		err = fmt.Errorf("deleting the bulk loop's pairs: %w", deleteErr)
	}
	return float64(count) / elapsed.Seconds(), err
}

// bulkPost creates items of Neutron's collection (networks, subnets) in
// one request, as Neutron's bulk API takes them ({"networks": [...]}), and
// returns their IDs in order.
func bulkPost(ctx context.Context, client *gophercloud.ServiceClient, collection string, items []map[string]any) ([]string, error) {
	var answer map[string][]struct {
		ID string `json:"id"`
	}
	if _, err := client.Post(ctx, client.ServiceURL(collection), map[string]any{collection: items}, &answer,
		&gophercloud.RequestOpts{OkCodes: []int{201}}); err != nil {
		return nil, fmt.Errorf("a bulk POST of %d %s: %w", len(items), collection, err)
	}
	ids := make([]string, 0, len(items))
	for _, r := range answer[collection] {
		ids = append(ids, r.ID)
	}
	if len(ids) != len(items) {
		return ids, fmt.Errorf("a bulk POST of %d %s made %d", len(items), collection, len(ids))
	}
	return ids, nil
}

// bulkBatches are the batch sizes the bulk loop is measured at: the
// controller's workers (what gathering their pending creates could send
// at once), and 100, a batch no gathering of a few milliseconds reaches
// but which shows what Neutron's bulk API itself allows.
func bulkBatches(workers, count int) []int {
	out := []int{min(workers, count)}
	if big := min(100, count); big > out[0] {
		out = append(out, big)
	}
	return out
}

// bulkRun is one bulk loop's batch and pairs per second.
type bulkRun struct {
	batch int
	rate  float64
}
