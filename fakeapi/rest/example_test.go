package rest_test

import (
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/informersim/informersim/fakeapi"
	"github.com/informersim/informersim/fakeapi/rest"
)

// The REST front in process: an http.Client whose transport is the front serves the Kubernetes
// API of a fake apiserver, errors included. client-go takes the same transport in
// rest.Config.Transport.
func ExampleNewTransport() {
	srv, _ := fakeapi.New(fakeapi.Config{})
	h, _ := rest.NewHandler(srv, rest.Options{})
	tr, _ := rest.NewTransport(h)
	client := &http.Client{Transport: tr}

	body := `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"demo"},"data":{"k":"v"}}`
	resp, _ := client.Post("http://informersim/api/v1/namespaces/default/configmaps", "application/json", strings.NewReader(body))
	resp.Body.Close()
	fmt.Println("create:", resp.Status)

	resp, _ = client.Post("http://informersim/api/v1/namespaces/default/configmaps", "application/json", strings.NewReader(body))
	out, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	fmt.Println("again:", resp.StatusCode, strings.Contains(string(out), `"reason":"AlreadyExists"`))
	// Output:
	// create: 201 Created
	// again: 409 true
}
