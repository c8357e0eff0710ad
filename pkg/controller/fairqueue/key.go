package fairqueue

import "k8s.io/client-go/tools/cache"

// objectNamespace is the namespace of a key of the Network queue.
func objectNamespace(key cache.ObjectName) string { return key.Namespace }
