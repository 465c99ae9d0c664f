package testservers

import (
	"fmt"
	"os"
	"strconv"
	"time"
)

// Environment variables RunFromEnv reads Options.Tasks from (see
// TaskOptions): a stdio child process that serves tasks.
const (
	EnvTasks                   = EnvVar + "_TASKS"                     // Enabled: "1" or "true"
	EnvTaskPollInterval        = EnvVar + "_TASK_POLL_INTERVAL"        // PollInterval, a time.Duration ("50ms")
	EnvTaskTTL                 = EnvVar + "_TASK_TTL"                  // TTL, a time.Duration ("-1ns": unlimited)
	EnvTaskForgetAfterPolls    = EnvVar + "_TASK_FORGET_AFTER_POLLS"   // ForgetAfterPolls
	EnvTaskMax                 = EnvVar + "_TASK_MAX"                  // MaxTasks
	EnvTaskStatusNotifications = EnvVar + "_TASK_STATUS_NOTIFICATIONS" // StatusNotifications: "1" or "true"
	EnvTaskInputWithoutResult  = EnvVar + "_TASK_INPUT_WITHOUT_RESULT" // InputWithoutResult: "1" or "true"
	EnvTaskRefuseAsResult      = EnvVar + "_TASK_REFUSE_AS_RESULT"     // RefuseAsResult: "1" or "true"
)

// tasksFromEnv reads the task options of the environment into o.
func tasksFromEnv(o *TaskOptions) error {
	for _, b := range []struct {
		name string
		v    *bool
	}{
		{EnvTasks, &o.Enabled},
		{EnvTaskStatusNotifications, &o.StatusNotifications},
		{EnvTaskInputWithoutResult, &o.InputWithoutResult},
		{EnvTaskRefuseAsResult, &o.RefuseAsResult},
	} {
		if v := os.Getenv(b.name); v != "" {
			on, err := strconv.ParseBool(v)
			if err != nil {
				return fmt.Errorf("%s: %w", b.name, err)
			}
			*b.v = on
		}
	}
	for _, d := range []struct {
		name string
		v    *time.Duration
	}{
		{EnvTaskPollInterval, &o.PollInterval},
		{EnvTaskTTL, &o.TTL},
	} {
		if v := os.Getenv(d.name); v != "" {
			dur, err := time.ParseDuration(v)
			if err != nil {
				return fmt.Errorf("%s: %w", d.name, err)
			}
			*d.v = dur
		}
	}
	for _, n := range []struct {
		name string
		v    *int
	}{
		{EnvTaskForgetAfterPolls, &o.ForgetAfterPolls},
		{EnvTaskMax, &o.MaxTasks},
	} {
		if v := os.Getenv(n.name); v != "" {
			i, err := strconv.Atoi(v)
			if err != nil {
				return fmt.Errorf("%s: %w", n.name, err)
			}
			*n.v = i
		}
	}
	return nil
}

// tasksEnv returns the environment variables of the task options o.
func tasksEnv(o TaskOptions) []string {
	var env []string
	add := func(name string, on bool, value string) {
		if on {
			env = append(env, name+"="+value)
		}
	}
	add(EnvTasks, o.Enabled, "1")
	add(EnvTaskPollInterval, o.PollInterval != 0, o.PollInterval.String())
	add(EnvTaskTTL, o.TTL != 0, o.TTL.String())
	add(EnvTaskForgetAfterPolls, o.ForgetAfterPolls != 0, strconv.Itoa(o.ForgetAfterPolls))
	add(EnvTaskMax, o.MaxTasks != 0, strconv.Itoa(o.MaxTasks))
	add(EnvTaskStatusNotifications, o.StatusNotifications, "1")
	add(EnvTaskInputWithoutResult, o.InputWithoutResult, "1")
	add(EnvTaskRefuseAsResult, o.RefuseAsResult, "1")
	return env
}
