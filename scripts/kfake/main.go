// Command kfake runs franz-go's in-process Kafka cluster
// (github.com/twmb/franz-go/pkg/kfake) on a port until interrupted: the
// Kafka the benchmarks of -events-kafka run against on a machine without
// one (docs/benchmarks.md). It is not a Kafka to keep data in.
//
//	go run ./scripts/kfake -port 19092 -topic events -partitions 3
package main

import (
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/twmb/franz-go/pkg/kfake"
)

func main() {
	port := flag.Int("port", 19092, "port to listen on (127.0.0.1)")
	topic := flag.String("topic", "events", "topic to create")
	partitions := flag.Int("partitions", 3, "partitions of the topic")
	flag.Parse()
	c, err := kfake.NewCluster(kfake.Ports(*port), kfake.SeedTopics(int32(*partitions), *topic))
	if err != nil {
		fmt.Fprintln(os.Stderr, "kfake:", err)
		os.Exit(1)
	}
	fmt.Println("kfake listening on", c.ListenAddrs())
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
	<-sig
	c.Close()
}
