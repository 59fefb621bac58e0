package api

import (
	"bytes"
	"errors"
	"os"
	"reflect"
	"strings"
	"testing"
	"time"
)

// webController is the controller of docs/CONTRACT.md, Spec, as Decode must
// read testdata/controller-web.json and its YAML twin.
func webController() *ReplicationController {
	return &ReplicationController{
		ID:     "web",
		Labels: map[string]string{"name": "web"},
		DesiredState: ReplicationControllerState{
			Replicas:      3,
			ReplicasInSet: map[string]string{"name": "web"},
			TaskTemplate: TaskTemplate{
				Labels: map[string]string{"name": "web"},
				DesiredState: TaskState{Manifest: ContainerManifest{
					Version: "v1beta1",
					Containers: []Container{{
						Name:    "web",
						Image:   "demo-task:latest",
						Command: Command{"/task", "--listen", ":8080"},
						Ports:   []Port{{Name: "http", ContainerPort: 8080, Protocol: "TCP"}},
						Env:     []EnvVar{{Name: "MODE", Value: "demo"}},
						Memory:  64 << 20,
					}},
				}},
			},
		},
	}
}

func readTestdata(t *testing.T, name string) []byte {
	t.Helper()
	data, err := os.ReadFile("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func TestDecodeReadsTheDesignExample(t *testing.T) {
	for _, file := range []string{"controller-web.json", "controller-web.yaml"} {
		t.Run(file, func(t *testing.T) {
			got, err := Decode(readTestdata(t, file))
			if err != nil {
				t.Fatalf("Decode: %v", err)
			}
			if want := webController(); !reflect.DeepEqual(got, want) {
				t.Errorf("Decode:\n got %+v\nwant %+v", got, want)
			}
			if err := Validate(got, ValidateOptions{Key: "/registry/controllers/web"}); err != nil {
				t.Errorf("Validate: %v", err)
			}
		})
	}
}

func TestDecodeCommandStringOrArray(t *testing.T) {
	tests := []struct {
		name    string
		command string
		want    Command
	}{
		{"string split on spaces", `"/task --listen :8080"`, Command{"/task", "--listen", ":8080"}},
		{"string with repeated spaces", `"  /task   -v "`, Command{"/task", "-v"}},
		{"array keeps spaces inside arguments", `["sh", "-c", "echo a b"]`, Command{"sh", "-c", "echo a b"}},
		{"empty array", `[]`, Command{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rc, err := Decode(withCommand(t, tt.command))
			if err != nil {
				t.Fatalf("Decode: %v", err)
			}
			got := rc.DesiredState.TaskTemplate.DesiredState.Manifest.Containers[0].Command
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("command = %q, want %q", got, tt.want)
			}
		})
	}
}

// withCommand returns the example spec with its command replaced by raw
// JSON.
func withCommand(t *testing.T, command string) []byte {
	t.Helper()
	return replaceOnce(t, readTestdata(t, "controller-web.json"), `"command": "/task --listen :8080"`, `"command": `+command)
}

func replaceOnce(t *testing.T, data []byte, old, new string) []byte {
	t.Helper()
	if bytes.Count(data, []byte(old)) != 1 {
		t.Fatalf("%q is not in the input exactly once", old)
	}
	return bytes.Replace(data, []byte(old), []byte(new), 1)
}

func TestDecodeRejects(t *testing.T) {
	web := readTestdata(t, "controller-web.json")
	webYAML := readTestdata(t, "controller-web.yaml")
	const container = "desiredState.taskTemplate.desiredState.manifest.containers[0]"
	tests := []struct {
		name  string
		input []byte
		want  string
	}{
		{"empty", nil, "decode controller: empty input"},
		{"only spaces", []byte(" \n\t "), "decode controller: empty input"},
		{"only a YAML comment", []byte("# nothing\n"), "decode controller: empty input"},
		{"null", []byte("null"), "decode controller: empty input"},
		{"not an object", []byte(`["web"]`), "decode controller: must be an object, got array"},
		{"a YAML scalar", []byte("web"), "decode controller: must be an object, got string"},

		{"unknown top-level field", []byte(`{"id": "web", "foo": 1}`), `decode controller: unknown field "foo"`},
		{"unknown nested field", replaceOnce(t, web, `"image"`, `"imag"`),
			`decode controller: unknown field "` + container + `.imag"`},
		{"unknown field in YAML", replaceOnce(t, webYAML, "workingDir:", "workdir:"),
			`decode controller: unknown field "` + container + `.workdir"`},
		{"field name in the wrong case", []byte(`{"id": "web", "desiredState": {"Replicas": 3}}`),
			`decode controller: unknown field "desiredState.Replicas" (did you mean "replicas"?)`},
		{"every unknown field", []byte(`{"id": "web", "foo": 1, "desiredState": {"Replicas": 3, "bar": 2}}`),
			`decode controller: unknown field "foo"; unknown field "desiredState.Replicas" (did you mean "replicas"?); unknown field "desiredState.bar"`},
		{"duplicate field", []byte(`{"id": "web", "desiredState": {"replicas": 3, "replicas": 3000}}`),
			`decode controller: duplicate field "desiredState.replicas"`},
		{"duplicate label key", []byte(`{"id": "web", "labels": {"a": "1", "a": "2"}}`),
			`decode controller: duplicate field "labels.a"`},
		{"duplicate key in YAML", []byte("id: web\nid: api\n"),
			`decode controller: invalid YAML: unmarshal errors: line 2: key "id" already set in map`},
		{"YAML number key and string key alike", []byte("id: web\nlabels:\n  1: a\n  \"1\": b\n"),
			`decode controller: invalid YAML: key "1" is in a map twice`},
		{"YAML null key", []byte("id: web\nlabels:\n  ~: a\n"), "decode controller: invalid YAML: a map key is null"},

		{"string for an int", []byte(`{"id": "web", "desiredState": {"replicas": "3"}}`),
			"decode controller: desiredState.replicas: cannot unmarshal string into int"},
		{"fraction for an int", []byte(`{"id": "web", "desiredState": {"replicas": 3.5}}`),
			"decode controller: desiredState.replicas: cannot unmarshal number 3.5 into int"},
		{"string for int64 in a list", replaceOnce(t, web, `"memory": 67108864`, `"memory": "64M"`),
			"decode controller: " + container + ".memory: cannot unmarshal string into int64"},
		{"number for a label value", []byte(`{"id": "web", "labels": {"tier": 1}}`),
			`decode controller: labels["tier"]: cannot unmarshal number into string`},
		{"YAML bool for a label value", []byte("id: web\nlabels:\n  enabled: yes\n"),
			`decode controller: labels["enabled"]: cannot unmarshal bool into string`},
		{"object for a list", []byte(`{"id": "web", "desiredState": {"taskTemplate": {"desiredState": {"manifest": {"containers": {}}}}}}`),
			"decode controller: desiredState.taskTemplate.desiredState.manifest.containers: cannot unmarshal object into array"},
		{"number for a command", withCommand(t, `8080`),
			"decode controller: " + container + ".command: cannot unmarshal number into string or array of strings"},
		{"object for a command", withCommand(t, `{"sh": "-c"}`),
			"decode controller: " + container + ".command: cannot unmarshal object into string or array of strings"},
		{"number in a command array", withCommand(t, `["sleep", 10]`),
			"decode controller: " + container + ".command[1]: cannot unmarshal number into string"},

		{"trailing comma", []byte(`{"id": "web",}`),
			"decode controller: invalid JSON at offset 13: invalid character '}' looking for beginning of object key string"},
		{"truncated", []byte(`{"id": "web"`), "decode controller: invalid JSON at offset 12: unexpected end of JSON input"},
		{"second object", []byte(`{"id": "web"} {"id": "api"}`),
			"decode controller: invalid JSON at offset 14: invalid character '{' after top-level value"},
		{"stray brace", []byte(`{"id": "web"}}`),
			"decode controller: invalid JSON at offset 13: invalid character '}' after top-level value"},
		{"broken YAML", []byte("id: [web\n"), "decode controller: invalid YAML: line 1: did not find expected ',' or ']'"},
		{"YAML flow mapping at the top, which is read as JSON", []byte("{id: web}"),
			"decode controller: invalid JSON at offset 1: invalid character 'i' looking for beginning of object key string"},
		{"second YAML document", []byte("id: web\n---\nid: api\n"),
			"decode controller: invalid YAML: more than one document; a spec is one document"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rc, err := Decode(tt.input)
			if err == nil {
				t.Fatalf("Decode = %+v, want error %q", rc, tt.want)
			}
			if got := err.Error(); got != tt.want {
				t.Errorf("error\n got %s\nwant %s", got, tt.want)
			}
			if rc != nil {
				t.Errorf("Decode returned %+v with its error, want nil", rc)
			}
		})
	}
}

func TestDecodeAccepts(t *testing.T) {
	tests := []struct {
		name  string
		input string
		want  string // id
	}{
		{"byte order mark", "\xef\xbb\xbf{\"id\": \"web\"}", "web"},
		{"surrounding whitespace", "\n\t {\"id\": \"web\"} \n\n", "web"},
		{"YAML document markers", "---\nid: web\n...\n", "web"},
		{"YAML with an empty second document", "id: web\n---\n", "web"},
		{"YAML flow mapping inside", "id: web\nlabels: {name: web}\n", "web"},
		{"null field", `{"id": "web", "labels": null}`, "web"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rc, err := Decode([]byte(tt.input))
			if err != nil {
				t.Fatalf("Decode: %v", err)
			}
			if rc.ID != tt.want {
				t.Errorf("id = %q, want %q", rc.ID, tt.want)
			}
		})
	}
}

func TestDecodeYAMLKeysAreText(t *testing.T) {
	rc, err := Decode([]byte("id: web\nlabels:\n  1: a\n  true: b\n  1.5: c\n"))
	if err != nil {
		t.Fatalf("Decode: %v", err)
	}
	if want := map[string]string{"1": "a", "true": "b", "1.5": "c"}; !reflect.DeepEqual(rc.Labels, want) {
		t.Errorf("labels = %q, want %q", rc.Labels, want)
	}
}

func TestDecodeSizeLimit(t *testing.T) {
	// padded is the example spec grown with trailing spaces to n bytes.
	padded := func(n int) []byte {
		web := readTestdata(t, "controller-web.json")
		return append(web, bytes.Repeat([]byte(" "), n-len(web))...)
	}
	t.Run("at the limit", func(t *testing.T) {
		if _, err := Decode(padded(MaxSpecBytes)); err != nil {
			t.Errorf("Decode of %d bytes: %v", MaxSpecBytes, err)
		}
	})
	t.Run("one byte over", func(t *testing.T) {
		_, err := Decode(padded(MaxSpecBytes + 1))
		if !errors.Is(err, ErrSpecTooLarge) {
			t.Fatalf("Decode of %d bytes: err = %v, want ErrSpecTooLarge", MaxSpecBytes+1, err)
		}
		want := "decode controller: spec too large: 262145 bytes, the limit is 262144"
		if err.Error() != want {
			t.Errorf("error\n got %s\nwant %s", err, want)
		}
	})
}

func TestToJSON(t *testing.T) {
	tests := []struct {
		name, input, want, wantErr string
	}{
		{name: "JSON as written, duplicates kept for the decoder", input: `{"id": "a", "id": "b"}`, want: `{"id": "a", "id": "b"}`},
		{name: "a byte order mark is dropped", input: "\xef\xbb\xbf{\"id\": \"a\"}", want: `{"id": "a"}`},
		{name: "YAML converted", input: "id: a\nlabels: {name: a}\n", want: `{"id":"a","labels":{"name":"a"}}`},
		{name: "YAML with a duplicate key", input: "id: a\nid: b\n", wantErr: `key "id" already set in map`},
		{name: "two YAML documents", input: "id: a\n---\nid: b\n", wantErr: "more than one document"},
		{name: "empty", input: " \n", wantErr: "empty input"},
		{name: "too large", input: "{" + strings.Repeat(" ", MaxSpecBytes) + "}", wantErr: "spec too large"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ToJSON([]byte(tt.input))
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Errorf("ToJSON = %q, %v; want an error with %q", got, err, tt.wantErr)
				}
				return
			}
			if err != nil || strings.TrimSpace(string(got)) != tt.want {
				t.Errorf("ToJSON = %q, %v; want %q", got, err, tt.want)
			}
		})
	}
}

func TestEncodeRoundTrips(t *testing.T) {
	rc := webController()
	rc.DesiredState.TaskTemplate.DesiredState.Manifest.Containers[0].Command = Command{"sh", "-c", "a && b > c"}
	rc.Labels["quoted"] = "yes" // a YAML 1.1 bool unless quoted
	rc.Labels["number"] = "0123"
	for _, enc := range []struct {
		name   string
		encode func(*ReplicationController) ([]byte, error)
	}{
		{"JSON", Encode},
		{"YAML", EncodeYAML},
	} {
		t.Run(enc.name, func(t *testing.T) {
			data, err := enc.encode(rc)
			if err != nil {
				t.Fatalf("encode: %v", err)
			}
			got, err := Decode(data)
			if err != nil {
				t.Fatalf("Decode of the encoding: %v\n%s", err, data)
			}
			if !reflect.DeepEqual(got, rc) {
				t.Errorf("round trip:\n got %+v\nwant %+v\nencoding:\n%s", got, rc, data)
			}
			if !bytes.HasPrefix(data, []byte("{\n  \"id\": \"web\",\n")) && !bytes.HasPrefix(data, []byte("id: web\n")) {
				t.Errorf("encoding does not start with the id:\n%s", data)
			}
		})
	}
}

func TestEncodeDoesNotEscapeHTML(t *testing.T) {
	rc := webController()
	rc.DesiredState.TaskTemplate.DesiredState.Manifest.Containers[0].Command = Command{"a", "&&", "b"}
	data, err := Encode(rc)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(data, []byte(`"&&"`)) {
		t.Errorf("Encode wrote the command as something other than \"&&\":\n%s", data)
	}
}

func TestEncodeNil(t *testing.T) {
	if _, err := Encode(nil); err == nil {
		t.Error("Encode(nil): no error")
	}
	if _, err := EncodeYAML(nil); err == nil {
		t.Error("EncodeYAML(nil): no error")
	}
}

func TestDecodeStatus(t *testing.T) {
	t.Run("reads the contract example and ignores unknown fields", func(t *testing.T) {
		in := `{
		  "id": "web", "replicas": 3, "readyReplicas": 2, "availableReplicas": 1,
		  "observedRevision": 1234,
		  "conditions": [{"type": "ReplicaFailure", "status": "True", "reason": "CreateFailed",
		    "message": "create web-x1b2c: no such image: demo-task:latest",
		    "lastTransitionTime": "2026-11-29T10:00:00Z"}],
		  "lastSyncTime": "2026-11-29T10:00:00Z",
		  "someFutureField": {"x": 1}
		}`
		got, err := DecodeStatus([]byte(in))
		if err != nil {
			t.Fatalf("DecodeStatus: %v", err)
		}
		at := time.Date(2026, 11, 29, 10, 0, 0, 0, time.UTC)
		want := &ReplicationControllerStatus{
			ID: "web", Replicas: 3, ReadyReplicas: 2, AvailableReplicas: 1, ObservedRevision: 1234,
			Conditions: []Condition{{Type: ConditionReplicaFailure, Status: "True", Reason: ReasonCreateFailed,
				Message: "create web-x1b2c: no such image: demo-task:latest", LastTransitionTime: at}},
			LastSyncTime: at,
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("DecodeStatus:\n got %+v\nwant %+v", got, want)
		}
	})
	tests := []struct {
		name, input, want string
	}{
		{"empty", "", "decode status: empty input"},
		{"wrong type", `{"id": "web", "replicas": "3"}`, "decode status: replicas: cannot unmarshal string into int"},
		{"broken", `{"id": `, "decode status: invalid JSON at offset 7: unexpected end of JSON input"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := DecodeStatus([]byte(tt.input))
			if err == nil || err.Error() != tt.want {
				t.Errorf("error\n got %v\nwant %s", err, tt.want)
			}
		})
	}
}

// FuzzDecode checks that Decode never panics and that whatever it accepts
// survives an encode and decode unchanged.
func FuzzDecode(f *testing.F) {
	for _, file := range []string{"controller-web.json", "controller-web.yaml", "controller-full.json", "controller-full.yaml"} {
		data, err := os.ReadFile("testdata/" + file)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Add([]byte(`{"id": "web", "desiredState": {"replicas": 1e3}}`))
	f.Add([]byte(`{"id": "web", "labels": {"a": null}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		rc, err := Decode(data)
		if err != nil {
			return
		}
		first, err := Encode(rc)
		if err != nil {
			t.Fatalf("Encode of a decoded spec: %v", err)
		}
		again, err := Decode(first)
		if err != nil {
			t.Fatalf("Decode of an encoded spec: %v\n%s", err, first)
		}
		second, err := Encode(again)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(first, second) {
			t.Errorf("encoding changed on a round trip:\n%s\nthen\n%s", first, second)
		}
		if strings.TrimSpace(string(first)) == "null" {
			t.Error("Decode accepted a document that encodes as null")
		}
	})
}
