// Package temporalsetup prepares a Temporal namespace for the service's
// workflows: what `svc temporal-setup` does before every deploy, and what
// the dev and test environments do to their own servers. It talks to the
// server, so it lives outside workflows (which promise no I/O) and takes the
// attributes from its callers (workflows.SearchAttributeTypes).
package temporalsetup

import (
	"context"
	"errors"
	"fmt"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/operatorservice/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"
)

// RegisterSearchAttributes adds the custom search attributes attrs (name →
// type) to the namespace, leaving those already there: running it twice
// changes nothing. An attribute that exists with another type is an error.
func RegisterSearchAttributes(ctx context.Context, c client.Client, namespace string, attrs map[string]enumspb.IndexedValueType) error {
	have, err := c.OperatorService().ListSearchAttributes(ctx, &operatorservice.ListSearchAttributesRequest{Namespace: namespace})
	if err != nil {
		return fmt.Errorf("list search attributes: %w", err)
	}
	missing := map[string]enumspb.IndexedValueType{}
	for name, kind := range attrs {
		existing, ok := have.GetCustomAttributes()[name]
		if ok && existing != kind {
			return fmt.Errorf("search attribute %s exists as %s, not %s", name, existing, kind)
		}
		if !ok {
			missing[name] = kind
		}
	}
	if len(missing) == 0 {
		return nil
	}
	_, err = c.OperatorService().AddSearchAttributes(ctx, &operatorservice.AddSearchAttributesRequest{Namespace: namespace, SearchAttributes: missing})
	var exists *serviceerror.AlreadyExists
	if err != nil && !errors.As(err, &exists) { // another process added them first
		return fmt.Errorf("add search attributes: %w", err)
	}
	return nil
}
