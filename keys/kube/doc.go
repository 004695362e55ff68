// Package kube reads keys of named Kubernetes Secrets with client-go, using
// only the get verb on each Secret (never list or watch), so that a Role
// granting get on resourceNames suffices. It never writes a Secret: for a
// value that must be created it gives a manifest for the user to apply.
package kube
