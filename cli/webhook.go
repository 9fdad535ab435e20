package cli

import "github.com/gnomon-sched/gnomon/internal/secret"

// webhookSecret reads the secret that signs generic webhook alerts from
// the file --webhook-secret-file (else $GNOMON_WEBHOOK_SECRET_FILE)
// names, if any, into cfg.
func webhookSecret(cfg *ServerConfig, env *Env, file string) error {
	if file == "" {
		file = env.Getenv("GNOMON_WEBHOOK_SECRET_FILE")
	}
	if file == "" {
		return nil
	}
	s, err := secret.Read(file)
	if err != nil {
		return usageErr("--webhook-secret-file: %v", err)
	}
	cfg.WebhookSecret = []byte(s)
	return nil
}
