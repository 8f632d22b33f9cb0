package evidence_test

import (
	"fmt"

	"github.com/signoff-dev/signoff/evidence"
)

// PAE is what a DSSE signature covers; this is the specification's own
// example.
func ExamplePAE() {
	fmt.Printf("%s\n", evidence.PAE("http://example.com/HelloWorld", []byte("hello world")))
	// Output: DSSEv1 29 http://example.com/HelloWorld 11 hello world
}
