// Package switches holds the runtime switches an administrator changes on a
// running node (docs/decisions/0028-listeners-and-operations.md): the log
// level and the trace sampler, served by GET|POST {ctx}/admin/log-level and
// {ctx}/admin/trace-sampler. A change applies to the node asked; Join makes
// the node apply the changes other nodes broadcast with scope=cluster.
package switches
