package loop_test

import (
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

func TestLoop(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "loop")
}
