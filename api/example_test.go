package api_test

import (
	"errors"
	"fmt"

	"github.com/replication-manager/replication-manager/api"
)

// A spec is decoded, then validated against the key it is stored under.
func ExampleDecode() {
	spec := []byte(`
id: web
desiredState:
  replicas: 2
  replicasInSet: {name: web}
  taskTemplate:
    labels: {name: web}
    desiredState:
      manifest:
        containers:
          - image: demo-task:latest
            command: /task --listen :8080
`)
	rc, err := api.Decode(spec)
	if err != nil {
		fmt.Println(err)
		return
	}
	if err := api.Validate(rc, api.ValidateOptions{Key: "/registry/controllers/web"}); err != nil {
		fmt.Println(err)
		return
	}
	c := rc.DesiredState.TaskTemplate.DesiredState.Manifest.Containers[0]
	fmt.Printf("%s: %d x %s %q\n", rc.ID, rc.DesiredState.Replicas, c.Image, c.Command)
	// Output:
	// web: 2 x demo-task:latest ["/task" "--listen" ":8080"]
}

// Decoding errors name the field.
func ExampleDecode_unknownField() {
	_, err := api.Decode([]byte(`{"id": "web", "desiredState": {"replica": 3}}`))
	fmt.Println(err)
	// Output:
	// decode controller: unknown field "desiredState.replica" (did you mean "replicas"?)
}

// Validate lists every problem, each with its field path.
func ExampleValidate() {
	rc, err := api.Decode([]byte(`{
	  "id": "web",
	  "desiredState": {
	    "replicas": -1,
	    "replicasInSet": {"name": "web"},
	    "taskTemplate": {
	      "labels": {"name": "api"},
	      "desiredState": {"manifest": {"containers": [{"image": "demo-task", "ports": [{"containerPort": 0}]}]}}
	    }
	  }
	}`))
	if err != nil {
		fmt.Println(err)
		return
	}
	err = api.Validate(rc, api.ValidateOptions{})
	var verr *api.ValidationError
	if errors.As(err, &verr) {
		for _, fe := range verr.Errors {
			fmt.Println(fe.Field)
			fmt.Println("   ", fe.Detail)
		}
	}
	// Output:
	// desiredState.replicas
	//     must be between 0 and 1000, got -1
	// desiredState.taskTemplate.labels
	//     selector key "name" is "api", desiredState.replicasInSet wants "web"
	// desiredState.taskTemplate.desiredState.manifest.containers[0].ports[0].containerPort
	//     must be between 1 and 65535, got 0
}

func ExampleTemplateHash() {
	rc, err := api.Decode([]byte(`{"id": "web", "desiredState": {"taskTemplate": {"labels": {"name": "web"},
	  "desiredState": {"manifest": {"containers": [{"image": "demo-task:latest"}]}}}}}`))
	if err != nil {
		fmt.Println(err)
		return
	}
	hash := api.TemplateHash(&rc.DesiredState.TaskTemplate)
	fmt.Println(api.LabelTemplateHash + "=" + hash)
	// Output:
	// replicationController.templateHash=4c709eefa6
}

// Fields that weaken the container's isolation are refused unless the
// policy allows them; each refusal names the daemon flag that would. A
// client that leaves the policy to the daemon checks the shape only, with
// AllowAllPolicy.
func ExampleValidate_securityPolicy() {
	rc, err := api.Decode([]byte(`
id: agent
desiredState:
  replicas: 1
  replicasInSet: {name: agent}
  taskTemplate:
    labels: {name: agent}
    desiredState:
      manifest:
        containers:
          - image: demo-task:latest
            hostNetwork: true
            volumes: [{hostPath: /srv/data, containerPath: /data, readOnly: true}]
`))
	if err != nil {
		fmt.Println(err)
		return
	}
	policy := api.SecurityPolicy{AllowHostMounts: true} // --allow-host-mounts
	var verr *api.ValidationError
	if errors.As(api.Validate(rc, api.ValidateOptions{Policy: policy}), &verr) {
		for _, fe := range verr.Errors {
			fmt.Println(fe.Field)
			fmt.Println("   ", fe.Detail)
		}
	}
	fmt.Println("shape:", api.Validate(rc, api.ValidateOptions{Policy: api.AllowAllPolicy()}))
	// Output:
	// desiredState.taskTemplate.desiredState.manifest.containers[0].hostNetwork
	//     refused: the manager was not started with --allow-host-network
	// shape: <nil>
}
