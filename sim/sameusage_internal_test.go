package sim

import (
	"reflect"
	"testing"

	"github.com/turnstile-dev/turnstile/loop"
)

// TestSameUsageComparesEveryField: two usages that differ in any one field, of Usage or of
// its Cost, are not the same, and equal ones are; sameUsage compares field by field, so a
// field added to either type and not compared there fails this.
func TestSameUsageComparesEveryField(t *testing.T) {
	if a, b := (loop.Usage{}), (loop.Usage{}); !sameUsage(&a, &b) {
		t.Fatal("two zero usages are not the same")
	}
	one := int64(1)
	if a, b := (loop.Usage{Reasoning: &one}), (loop.Usage{Reasoning: &one}); !sameUsage(&a, &b) {
		t.Fatal("usages sharing their pointers are not the same")
	}
	var differ func(path string, v reflect.Value)
	check := func(path string, set func(reflect.Value)) {
		var b loop.Usage
		set(reflect.ValueOf(&b).Elem())
		a := loop.Usage{}
		if sameUsage(&a, &b) {
			t.Errorf("usages differing in %s are the same", path)
		}
	}
	differ = func(path string, v reflect.Value) {
		for i := range v.NumField() {
			f := v.Type().Field(i)
			name := path + f.Name
			index := append([]int(nil), v.Type().Field(i).Index...)
			switch f.Type.Kind() {
			case reflect.Struct:
				differ(name+".", v.Field(i))
				continue
			case reflect.Int64, reflect.Float64, reflect.Bool, reflect.Pointer:
			default:
				t.Fatalf("%s is a %s: the test sets int64, float64, bool, pointer and struct fields", name, f.Type)
			}
			at := func(u reflect.Value) reflect.Value {
				if path != "" {
					u = u.FieldByName(path[:len(path)-1])
				}
				return u.FieldByIndex(index)
			}
			check(name, func(u reflect.Value) {
				x := at(u)
				switch x.Kind() {
				case reflect.Int64:
					x.SetInt(1)
				case reflect.Float64:
					x.SetFloat(1.5)
				case reflect.Bool:
					x.SetBool(true)
				case reflect.Pointer:
					x.Set(reflect.New(x.Type().Elem()))
				}
			})
		}
	}
	differ("", reflect.ValueOf(loop.Usage{}))
}
