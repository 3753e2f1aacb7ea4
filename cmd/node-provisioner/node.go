package main

import (
	"errors"

	"github.com/plasmactl/plasma-node/pxe/daemon"
	"github.com/plasmactl/plasma-node/pxe/registrar"
	"github.com/plasmactl/plasma-node/pxe/registry"
)

// node returns the node-provisioner a command acts on: --server's API,
// else the state folder on this host, as registrar.Open chose.
func (a *app) node() (registrar.Operator, error) {
	r, err := a.registrar()
	if err != nil {
		return nil, err
	}
	return daemon.OperatorOf(r)
}

// localNotFound makes a name the state folder on this host does not
// hold a usage error (exit 2); through an API it stays the API's.
func localNotFound(n registrar.Operator, err error) error {
	if _, local := n.(daemon.Local); local && errors.Is(err, registry.ErrNotFound) {
		return usageError(err)
	}
	return err
}
