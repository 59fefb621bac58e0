package agent

import (
	"reflect"
	"testing"
	"time"

	"github.com/replication-manager/replication-manager/api"
)

// Every field of an api.Task comes back from the cache's form: one that a
// later change adds to api.Task and not to cachedTask fails here.
func TestTheCacheFormKeepsEveryFieldOfATask(t *testing.T) {
	at := time.Date(2026, 12, 5, 10, 0, 0, 123456789, time.UTC)
	var full api.Task
	v := reflect.ValueOf(&full).Elem()
	for i := range v.NumField() {
		f := v.Field(i)
		switch f.Interface().(type) {
		case string:
			f.SetString(v.Type().Field(i).Name + "-value")
		case map[string]string:
			f.Set(reflect.ValueOf(map[string]string{api.LabelController: "web", api.LabelSlot: "3"}))
		case time.Time:
			f.Set(reflect.ValueOf(at.Add(time.Duration(i) * time.Second)))
		case int:
			f.SetInt(137)
		case bool:
			f.SetBool(true)
		default:
			t.Fatalf("api.Task.%s is of a type this test does not fill: add it here and to cachedTask", v.Type().Field(i).Name)
		}
	}
	for name, task := range map[string]api.Task{"every field set": full, "the zero task": {ID: full.ID}} {
		labels, _ := splitLabels(task.Labels, nil)
		if got := cacheForm(task, labels).task(task.ID); !reflect.DeepEqual(got, task) {
			t.Errorf("%s: the cache gives back\n%+v\nfor\n%+v", name, got, task)
		}
	}
}
