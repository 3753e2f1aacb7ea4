// Package scaleway is the Scaleway Elastic Metal provider: pools become
// scaleway_baremetal_server resources of the scaleway/scaleway plugin,
// adopted servers are imported by <zone>/<uuid>, and credentials come
// from SCW_ACCESS_KEY, SCW_SECRET_KEY and SCW_DEFAULT_PROJECT_ID or
// infrastructure.api.
//
// It calls no API itself. Dedibox servers (sd-<N>) are recognised as
// server ids but not configured: the baremetal resource cannot adopt them.
package scaleway
