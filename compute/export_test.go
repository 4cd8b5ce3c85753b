package compute

import "svc/cluster"

// SetCluster turns on dispatch across nodes on a running test server, as
// Config.Cluster and Config.Forward do at construction.
func (s *Server) SetCluster(dir cluster.Directory, fwd Forwarder) {
	s.dir, s.fwd = dir, fwd
}
