// Command server is the stdio MCP server of cadre's tests (mcptest.New).
// -exit-on-call N makes it exit, mid-call, on its Nth tool call: a
// server that crashes mid-run.
package main

import (
	"context"
	"flag"
	"log"
	"os"

	"github.com/cadre-dev/cadre/internal/mcp/mcptest"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func main() {
	exitOn := flag.Int64("exit-on-call", 0, "exit on this tool call (0: never)")
	flag.Parse()
	s := mcptest.New(mcptest.Options{OnCall: func(n int64) {
		if n == *exitOn {
			os.Exit(3)
		}
	}})
	if err := s.Run(context.Background(), &mcp.StdioTransport{}); err != nil {
		log.Fatal(err)
	}
}
