// Package api holds the replication controller's types in their 2014 JSON
// shape, the status the manager writes back, the container labels of the
// contract, and the one decoder and validator every program shares.
package api
