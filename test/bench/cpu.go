package main

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// The two sides of the machine that a create phase keeps busy, by the
// kernel's name of each process (comm: 15 characters at most; Neutron's
// processes rename themselves "neutron-server: api worker …"). The plain
// loop spends CPU on the Neutron side, and on its own client; the
// controller's creates spend it on the Neutron side and on the API
// server, etcd, the controller and the benchmark's watch. On 2 cores what
// the second side spends is CPU that Neutron does not get.
var (
	neutronSide    = []string{"neutron-server:", "neutron-server", "mariadbd", "ovsdb-server", "ovn-northd"}
	kubernetesSide = slices.Concat(apiServerPart, controllerPart, benchmarkPart)
)

// The Kubernetes side in its three parts, for kubernetesRow: what the API
// server and etcd spend serving the writes and watches, what the
// controller's own process spends, and the benchmark's creates and watch.
var (
	apiServerPart  = []string{"kube-apiserver", "etcd"}
	controllerPart = []string{"network-control"}
	benchmarkPart  = []string{"bench"}
)

// neutronParts is the Neutron side by process, for neutronRow, and
// Keystone after it, which validates the tokens neutron-server is sent
// (neutronSide leaves it out: it is the same for every phase's token).
var neutronParts = [][]string{{"neutron-server:", "neutron-server"}, {"mariadbd"}, {"ovsdb-server"}, {"ovn-northd"}, {"keystone-wsgi-p"}}

// clockTicks is USER_HZ, the unit of /proc/<pid>/stat's times: 100 on
// every Linux architecture Go supports.
const clockTicks = 100

// cpuSample is the CPU seconds (user + system) each process name has used
// so far, summed over the processes of that name.
type cpuSample map[string]float64

// sampleCPU reads every process's CPU time from /proc, by the kernel's
// name of the process.
func sampleCPU() cpuSample {
	s := cpuSample{}
	stats, _ := filepath.Glob("/proc/[0-9]*/stat")
	for _, path := range stats {
		data, err := os.ReadFile(path)
		if err != nil {
			continue // it exited
		}
		// pid (comm) state ppid ...: comm may hold spaces and parentheses,
		// so the fields are counted from the last ')'.
		text := string(data)
		open, closing := strings.IndexByte(text, '('), strings.LastIndexByte(text, ')')
		if open < 0 || closing < open {
			continue
		}
		fields := strings.Fields(text[closing+1:])
		if len(fields) < 13 {
			continue
		}
		utime, _ := strconv.ParseFloat(fields[11], 64)
		stime, _ := strconv.ParseFloat(fields[12], 64)
		s[text[open+1:closing]] += (utime + stime) / clockTicks
	}
	return s
}

// since is the CPU seconds the processes named in side used from before
// to s.
func (s cpuSample) since(before cpuSample, side []string) float64 {
	total := 0.0
	for _, name := range side {
		total += s[name] - before[name]
	}
	return total
}

// kubernetesRow formats one phase's CPU on the Kubernetes side, per item
// made, in its three parts: the API server and etcd / the controller / the
// benchmark.
func kubernetesRow(before, after cpuSample, items int) string {
	n := float64(items)
	return fmt.Sprintf("%.4f / %.4f / %.4f", after.since(before, apiServerPart)/n,
		after.since(before, controllerPart)/n, after.since(before, benchmarkPart)/n)
}

// neutronRow formats one phase's CPU on the Neutron side, per item, by
// process: neutron-server / MariaDB / OVN's databases / northd, then
// Keystone's.
func neutronRow(before, after cpuSample, items int) string {
	parts := make([]string, len(neutronParts))
	for i, part := range neutronParts {
		parts[i] = fmt.Sprintf("%.4f", after.since(before, part)/float64(items))
	}
	return strings.Join(parts, " / ")
}

// cpuRow formats one phase's CPU, per item made, on each side.
func cpuRow(before, after cpuSample, items int) string {
	n := float64(items)
	return fmt.Sprintf("%.3f / %.3f", after.since(before, neutronSide)/n, after.since(before, kubernetesSide)/n)
}
