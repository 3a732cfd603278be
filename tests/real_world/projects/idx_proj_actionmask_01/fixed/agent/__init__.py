from agent.policy import Policy
